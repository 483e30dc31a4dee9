"""Hermite expansion of the clipped ramp g(t) = t_+ - (t-1)_+ (Appendix B.2.3, Lemma 13).

With G ~ N(0, 1), He_r the probabilists' Hermite polynomials and h_r = He_r / sqrt(r!) their
orthonormal versions, g = sum_r ghat_r h_r with ghat_r = E[g(G) h_r(G)]. Three independent ways to
get the coefficients live here, so that the page and the tests can compare them:

* :func:`clipped_ramp_hermite_exact` -- SymPy integrates g h_r phi exactly (closed forms in
  pi, e and erf);
* :func:`clipped_ramp_hermite_coefficients` -- floats from Lemma 13's closed form
  ghat_r = (phi(0) He_{r-2}(0) - phi(1) He_{r-2}(1)) / sqrt(r!) for r >= 2 (with ghat_0 = E g and
  ghat_1 = P(0 < G < 1)), evaluated with the stable three-term recurrence of h_r;
* :func:`clipped_ramp_hermite_quadrature` -- adaptive quadrature (scipy.integrate.quad).

The moments E g(G), E g(G)^2 = 1/2 - phi(1) and the Parseval tail sum_{r > r0} ghat_r^2 are here
too: the tail is what keeps the kernel/RFM error of Lemma 17 away from zero.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp
from scipy import integrate, special, stats

from ..checks import check_int

__all__ = [
    "clipped_ramp",
    "normalized_hermite",
    "clipped_ramp_hermite_coefficients",
    "clipped_ramp_hermite_exact",
    "clipped_ramp_hermite_quadrature",
    "lemma13_closed_form_exact",
    "lemma13_generating_function_check",
    "clipped_ramp_moments",
    "hermite_tail",
    "hermite_tail_direct",
]

_PHI0 = 1.0 / math.sqrt(2.0 * math.pi)  # phi(0)
_PHI1 = math.exp(-0.5) / math.sqrt(2.0 * math.pi)  # phi(1)





def clipped_ramp(t: np.ndarray | float) -> np.ndarray:
    """The link of Section 4.2, g(t) = t_+ - (t - 1)_+ = clip(t, 0, 1)."""
    return np.clip(np.asarray(t, dtype=np.float64), 0.0, 1.0)


def normalized_hermite(r_max: int, t: np.ndarray | float) -> np.ndarray:
    """``(r_max + 1, *t.shape)`` array of h_r(t) = He_r(t)/sqrt(r!), r = 0..r_max.

    Uses h_{r+1} = (t h_r - sqrt(r) h_{r-1}) / sqrt(r + 1), which stays O(1) where He_r and r!
    separately overflow (r in the hundreds).
    """
    r_max = check_int(r_max, "r_max", 0)
    t = np.asarray(t, dtype=np.float64)
    out = np.empty((r_max + 1, *t.shape))
    out[0] = 1.0
    if r_max >= 1:
        out[1] = t
    for r in range(1, r_max):
        out[r + 1] = (t * out[r] - math.sqrt(r) * out[r - 1]) / math.sqrt(r + 1)
    return out


def clipped_ramp_moments() -> dict[str, float]:
    """E g(G), E g(G)^2, Var g(G) and alpha = P(0 < G < 1) = E g'(G)^2, in closed form.

    E g = phi(0) - phi(1) + 1 - Phi(1); E g^2 = int_0^1 t^2 phi + P(G > 1) = 1/2 - phi(1).
    """
    mean = _PHI0 - _PHI1 + stats.norm.sf(1.0)
    second = 0.5 - _PHI1
    alpha = stats.norm.cdf(1.0) - 0.5
    return {"mean": mean, "second_moment": second, "variance": second - mean**2, "alpha": alpha}


@lru_cache(maxsize=8)
def _coefficients(r_max: int) -> np.ndarray:
    r = np.arange(r_max + 1)
    out = np.zeros(r_max + 1)
    m = clipped_ramp_moments()
    out[0] = m["mean"]
    if r_max >= 1:
        out[1] = m["alpha"]  # E[g h_1] = E[g'(G)] by Stein's lemma
    if r_max >= 2:
        h0 = normalized_hermite(r_max - 2, 0.0)
        h1 = normalized_hermite(r_max - 2, 1.0)
        rr = r[2:].astype(np.float64)
        # He_{r-2}/sqrt(r!) = h_{r-2} / sqrt(r (r-1))
        out[2:] = (_PHI0 * h0 - _PHI1 * h1) / np.sqrt(rr * (rr - 1.0))
    out.setflags(write=False)
    return out


def clipped_ramp_hermite_coefficients(r_max: int) -> np.ndarray:
    """Floats ghat_0, ..., ghat_{r_max} of the clipped ramp (Lemma 13's closed form for r >= 2).

    ghat_r = (phi(0) He_{r-2}(0) - phi(1) He_{r-2}(1)) / sqrt(r!)   (r >= 2),
    ghat_0 = E g(G),  ghat_1 = E g'(G) = P(0 < G < 1).
    """
    return _coefficients(check_int(r_max, "r_max", 0)).copy()


def clipped_ramp_hermite_quadrature(r: int) -> float:
    """ghat_r = int g h_r phi by adaptive quadrature on [0, 1] and [1, inf) (independent check)."""
    r = check_int(r, "r", 0)

    def h(t: float) -> float:
        return float(special.eval_hermitenorm(r, t)) / math.sqrt(math.factorial(r))

    phi = stats.norm.pdf
    inner, _ = integrate.quad(lambda t: t * h(t) * phi(t), 0.0, 1.0, epsabs=1e-14, epsrel=1e-13, limit=200)
    outer, _ = integrate.quad(lambda t: h(t) * phi(t), 1.0, np.inf, epsabs=1e-14, epsrel=1e-13, limit=200)
    return inner + outer


_t = sp.Symbol("t", real=True)


def _phi_sym(t) -> sp.Expr:
    t = sp.sympify(t)  # an int argument must stay exact: exp(-1/2), not exp(-0.5)
    return sp.exp(-t**2 / 2) / sp.sqrt(2 * sp.pi)


def clipped_ramp_hermite_exact(r: int) -> sp.Expr:
    """SymPy's exact ghat_r = int_0^1 t h_r(t) phi(t) dt + int_1^oo h_r(t) phi(t) dt."""
    r = check_int(r, "r", 0)
    h = sp.Poly(sp.hermite_prob(r, _t), _t)
    # integrate monomial by monomial (cached), which is much faster than integrating the product
    expr = sum(
        (c * (_gaussian_moment(k + 1, 0, 1) + _gaussian_moment(k, 1, sp.oo)) for (k,), c in h.terms()),
        sp.Integer(0),
    )
    return sp.simplify(expr / sp.sqrt(sp.factorial(r)))


@lru_cache(maxsize=None)
def _gaussian_moment(k: int, a, b) -> sp.Expr:
    """Exact int_a^b t^k phi(t) dt.

    SymPy integrates k = 0, 1 directly; higher k use integration by parts,
    int_a^b t^k phi = [-t^{k-1} phi(t)]_a^b + (k-1) int_a^b t^{k-2} phi, because sp.integrate
    itself takes minutes for k around 10.
    """
    if k <= 1:
        return sp.integrate(_t**k * _phi_sym(_t), (_t, a, b))
    boundary = sp.limit(-(_t ** (k - 1)) * _phi_sym(_t), _t, b) if b == sp.oo else -sp.Integer(b) ** (k - 1) * _phi_sym(b)
    boundary -= -sp.Integer(a) ** (k - 1) * _phi_sym(a)
    return sp.expand(boundary + (k - 1) * _gaussian_moment(k - 2, a, b))


def lemma13_closed_form_exact(r: int) -> sp.Expr:
    """Lemma 13 as an exact SymPy expression: (phi(0) He_{r-2}(0) - phi(1) He_{r-2}(1)) / sqrt(r!)."""
    r = check_int(r, "r", minimum=2)
    he0 = sp.hermite_prob(r - 2, 0)
    he1 = sp.hermite_prob(r - 2, 1)
    return (_phi_sym(0) * he0 - _phi_sym(1) * he1) / sp.sqrt(sp.factorial(r))


def lemma13_generating_function_check(m_max: int) -> bool:
    """Lemma 13's identity sum_m a_m t^m / m! = e^{-t^2/2} (phi(0) - phi(1) e^t), checked exactly.

    a_m = phi(0) He_m(0) - phi(1) He_m(1). The right-hand side is expanded as a power series to
    order ``m_max`` and its coefficients are compared with a_m / m! symbolically.
    """
    m_max = check_int(m_max, "m_max", minimum=1)
    rhs = sp.exp(-_t**2 / 2) * (_phi_sym(0) - _phi_sym(1) * sp.exp(_t))
    series = sp.series(rhs, _t, 0, m_max + 1).removeO()
    poly = sp.Poly(sp.expand(series), _t)
    for m in range(m_max + 1):
        a_m = _phi_sym(0) * sp.hermite_prob(m, 0) - _phi_sym(1) * sp.hermite_prob(m, 1)
        if sp.simplify(poly.coeff_monomial(_t**m) - a_m / sp.factorial(m)) != 0:
            return False
    return True


def hermite_tail(r0: int | np.ndarray) -> np.ndarray | float:
    """Parseval tail sum_{r > r0} ghat_r^2 = E g(G)^2 - sum_{r <= r0} ghat_r^2 (Lemma 13).

    Accepts an integer or an array of integers; float64 cancellation leaves an absolute error of
    about 1e-16, far below the tails of interest (about r0^{-3/2} / 10).
    """
    r0_arr = np.asarray(r0)
    if r0_arr.dtype.kind not in "iu" or (r0_arr < 0).any():
        raise ValueError(f"r0={r0!r} must be a non-negative integer (or an array of them)")
    partial = np.cumsum(_coefficients(int(r0_arr.max())) ** 2)
    tail = clipped_ramp_moments()["second_moment"] - partial[r0_arr]
    return float(tail) if np.ndim(r0) == 0 else tail


def hermite_tail_direct(r0: int, r_stop: int) -> float:
    """sum_{r0 < r <= r_stop} ghat_r^2 summed term by term (a lower estimate of the tail)."""
    r0 = check_int(r0, "r0", 0)
    r_stop = check_int(r_stop, "r_stop", minimum=r0)
    return float(np.sum(_coefficients(r_stop)[r0 + 1 :] ** 2))
