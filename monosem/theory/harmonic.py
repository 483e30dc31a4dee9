"""Harmonic dimension and directional energy (Appendix B.2.3, Lemma 14).

V_{r,K} is the traceless part of the order-r Gaussian chaos in K variables, equivalently the
harmonic homogeneous polynomials of degree r, an irreducible O(K) representation. Lemma 14 gives

* its dimension H_{r,K} = C(K+r-1, r) - C(K+r-3, r-2), and
* the directional energy alpha_{r,K} = ||P_{r,K} h_r(q^T z)||^2 for a unit q, as a product formula
  simplified from a finite sum over the harmonic projection of x_1^r.

Each quantity is computed two ways so that the page can compare them: the formulas of the lemma
(exact, with :class:`fractions.Fraction`) and a direct SymPy linear-algebra count / projection in
the space of homogeneous polynomials.

Dictionary used by the direct computations: a symmetric r-tensor T is the polynomial
p(x) = <T, x^{(r)}>; the trace of T is Delta p / (r (r-1)) (so traceless = harmonic), and the tensor
inner product is the Fischer product <x^a, x^b> = delta_{ab} a! / r!. Under the Gaussian-chaos
isometry, h_r(q^T z) is the tensor q^{(r)}, i.e. the polynomial (q^T x)^r.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations_with_replacement

import numpy as np
import sympy as sp

from ..checks import check_int

__all__ = [
    "harmonic_dimension",
    "harmonic_dimension_direct",
    "harmonic_energy",
    "harmonic_energy_exact",
    "harmonic_energy_sum",
    "harmonic_energy_direct",
]





def harmonic_dimension(r: int, K: int) -> int:
    """H_{r,K} = C(K+r-1, r) - C(K+r-3, r-2), the dimension of V_{r,K} (Lemma 14).

    The second binomial is 0 for r < 2 (there is no trace to remove), so H_{0,K} = 1 and
    H_{1,K} = K. Exact integer.
    """
    r = check_int(r, "r", 0)
    K = check_int(K, "K", 1)
    full = math.comb(K + r - 1, r)
    traces = math.comb(K + r - 3, r - 2) if r >= 2 else 0
    return full - traces


def harmonic_energy_exact(r: int, K: int) -> Fraction:
    """alpha_{r,K} from Lemma 14's product formulas, as an exact rational.

    r = 2m:   prod_{j<m} (K + 2j - 1) / (K + 2m + 2j - 2);
    r = 2m+1: prod_{j<m} (K + 2j - 1) / (K + 2m + 2j).
    """
    r = check_int(r, "r", 0)
    K = check_int(K, "K", 1)
    m, odd = divmod(r, 2)
    out = Fraction(1)
    for j in range(m):
        out *= Fraction(K + 2 * j - 1, K + 2 * m + 2 * j - (0 if odd else 2))
    return out


def harmonic_energy(r: int, K: int) -> float:
    """alpha_{r,K} = ||P_{r,K} h_r(q^T z)||^2_{L^2}, the share of h_r(q^T z) in V_{r,K} (Lemma 14).

    The product formula of :func:`harmonic_energy_exact` in float64 (every factor is in [0, 1),
    so the product loses no accuracy; the exact rationals get slow for r in the hundreds).
    """
    r = check_int(r, "r", 0)
    K = check_int(K, "K", 1)
    m, odd = divmod(r, 2)
    j = np.arange(m, dtype=np.float64)
    return float(np.prod((K + 2 * j - 1) / (K + 2 * m + 2 * j - (0 if odd else 2))))


def harmonic_energy_sum(r: int, K: int) -> Fraction:
    """The finite sum of Lemma 14's proof, exactly: the coefficient of x_1^r in H_r[x_1^r],

    sum_{j <= r/2} (-1)^j r! Gamma(r - j + K/2 - 1) / (4^j j! (r-2j)! Gamma(r + K/2 - 1)).

    The Gamma ratio is 1 / prod_{i=1..j} (r + K/2 - 1 - i), a rational number for every K.
    Requires r >= 2 or K >= 2 (for r = 1, K = 1 the Gamma functions have a pole).
    """
    r = check_int(r, "r", 0)
    K = check_int(K, "K", 1)
    if K == 1 and r < 2:
        raise ValueError("harmonic_energy_sum needs K >= 2 when r < 2 (Gamma pole); use harmonic_energy")
    half_k = Fraction(K, 2)
    total = Fraction(0)
    for j in range(r // 2 + 1):
        ratio = Fraction(1)
        for i in range(1, j + 1):
            ratio /= r + half_k - 1 - i
        total += Fraction((-1) ** j * math.factorial(r), 4**j * math.factorial(j) * math.factorial(r - 2 * j)) * ratio
    return total


def _monomials(r: int, K: int) -> list[tuple[int, ...]]:
    """Exponent vectors of the degree-r monomials in K variables."""
    out = []
    for combo in combinations_with_replacement(range(K), r):
        a = [0] * K
        for i in combo:
            a[i] += 1
        out.append(tuple(a))
    return out


def _laplacian_matrix(r: int, K: int) -> tuple[sp.Matrix, list[tuple[int, ...]]]:
    """Matrix of Delta from degree-r to degree-(r-2) homogeneous polynomials (monomial bases)."""
    src = _monomials(r, K)
    dst = _monomials(r - 2, K) if r >= 2 else []
    index = {a: i for i, a in enumerate(dst)}
    L = sp.zeros(max(len(dst), 1), len(src))
    for col, a in enumerate(src):
        for i in range(K):
            if a[i] >= 2:
                b = list(a)
                b[i] -= 2
                L[index[tuple(b)], col] += a[i] * (a[i] - 1)
    return L, src


def harmonic_dimension_direct(r: int, K: int) -> int:
    """dim ker(Delta) on degree-r homogeneous polynomials in K variables, by SymPy's exact rank.

    Independent of Lemma 14's binomial formula (which assumes the trace map is onto).
    Intended for small cases: the matrix has C(K+r-1, r) columns.
    """
    r = check_int(r, "r", 0)
    K = check_int(K, "K", 1)
    L, src = _laplacian_matrix(r, K)
    return len(src) - (L.rank() if r >= 2 else 0)


def harmonic_energy_direct(r: int, K: int) -> Fraction:
    """||P_{r,K} e_1^{(r)}||^2 by exact orthogonal projection onto harmonic polynomials.

    Builds a basis of ker(Delta) (SymPy nullspace), the Fischer Gram matrix
    G = N^T D N with D = diag(a!/r!), and returns b^T G^{-1} b with b = N^T D e for the monomial
    e = x_1^r (a unit tensor). Independent of both formulas of Lemma 14. Small cases only.
    """
    r = check_int(r, "r", 0)
    K = check_int(K, "K", 1)
    L, src = _laplacian_matrix(r, K)
    weights = sp.diag(*[sp.Rational(math.prod(math.factorial(ai) for ai in a), math.factorial(r)) for a in src])
    basis = sp.Matrix.hstack(*L.nullspace()) if r >= 2 else sp.eye(len(src))
    if basis.shape[1] == 0:
        return Fraction(0)
    target = sp.zeros(len(src), 1)
    target[src.index((r,) + (0,) * (K - 1)), 0] = 1
    b = basis.T * weights * target
    gram = basis.T * weights * basis
    value = (b.T * gram.LUsolve(b))[0, 0]
    value = sp.nsimplify(value)
    return Fraction(int(value.p), int(value.q))
