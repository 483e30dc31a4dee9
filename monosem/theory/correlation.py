"""The population correlation Phi(omega) = E[y relu(omega^T x)] of Lemma 3 and its derivatives.

On the symmetric mixture of Section 4.1 (``monosem.data.symmetric_mixture(K, R)``: d = 2K,
mu_c = R e_c, v_c = e_{K+c}, x = mu_c + z, y = h3(<z, v_c>)) Lemma 3 gives, for a unit omega,

    Phi(omega) = -(1/(K sqrt 6)) sum_c b_c phi(b_c) rho_c^3,   b_c = <omega, mu_c> = R omega_c,
                                                               rho_c = <omega, v_c> = omega_{K+c},

with phi the standard normal density. The same argument (Mehler's formula E[h_k(U) | V] =
rho^k h_k(V) and two integrations by parts, E[He_k(G)(b + G)_+] = He_{k-2}(-b) phi(b)) gives the
correlation of any Hermite target y = sum_k a_k h_k(<z, v_c>), h_k = He_k / sqrt(k!), k >= 2;
``coeffs`` selects it (default: the paper's pure cubic {3: 1}). That generalization is used only
for the "perturbations of the pure cubic target" remark at the end of Appendix B.1.3.

Everything here is closed form and batched over the leading axes of ``omega``; NumPy arrays and
torch tensors are both accepted and the result has the input's type (torch results are
differentiable, which the tests use to check the closed-form gradient against autograd).
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import torch

from ..checks import check_int, check_positive

__all__ = [
    "population_correlation",
    "euclidean_gradient",
    "spherical_gradient",
    "spherical_hessian",
    "cluster_coordinates",
    "check_hermite_coeffs",
]

_SQRT_2PI = math.sqrt(2.0 * math.pi)
PURE_CUBIC: dict[int, float] = {3: 1.0}


# ------------------------------------------------------------------------------- validation
def _check_K(K: int) -> int:
    return check_int(K, "K")


def _check_R(R: float) -> float:
    return check_positive(R, "R")


def check_hermite_coeffs(coeffs: Mapping[int, float] | None) -> dict[int, float]:
    """Validate a Hermite target {degree k: coefficient a_k}; ``None`` means the pure cubic {3: 1}."""
    if coeffs is None:
        return dict(PURE_CUBIC)
    out: dict[int, float] = {}
    for k, a in dict(coeffs).items():
        check_int(k, "coeffs degree", 2, 12, what="a Hermite degree")
        if not math.isfinite(float(a)):
            raise ValueError(f"coeffs[{k}]={a!r} must be a finite number")
        out[int(k)] = float(a)
    if not out:
        raise ValueError("coeffs must hold at least one Hermite degree")
    return out


def _check_omega(omega, K: int, unit: bool):
    """Return (torch float tensor, was_numpy); raise ValueError on a wrong shape or norm."""
    was_numpy = not isinstance(omega, torch.Tensor)
    t = torch.as_tensor(np.asarray(omega, dtype=np.float64)) if was_numpy else omega
    if not t.is_floating_point():
        t = t.to(torch.float64)
    if t.ndim < 1 or t.shape[-1] != 2 * K:
        raise ValueError(f"omega must have shape (..., {2 * K}) = (..., 2K), got {tuple(t.shape)}")
    if unit:
        tol = 1e-6 if t.dtype == torch.float64 else 1e-4
        norms = t.detach().norm(dim=-1)
        if t.numel() and bool(((norms - 1.0).abs() > tol).any()):
            worst = float((norms - 1.0).abs().max())
            raise ValueError(f"omega must have unit rows (Lemma 3 is stated on the sphere); largest |norm - 1| = {worst:.3g}")
    return t, was_numpy


def _out(t: torch.Tensor, was_numpy: bool):
    return t.detach().cpu().numpy() if was_numpy else t


# --------------------------------------------------------------------------- the closed form
def _he(n: int, x):
    """Probabilists' Hermite polynomial He_n(x) by the three-term recurrence (NumPy or torch)."""
    prev, cur = x * 0.0 + 1.0, x
    if n == 0:
        return prev
    for j in range(1, n):
        prev, cur = cur, x * cur - j * prev
    return cur


def cluster_coordinates(omega, K: int, R: float):
    """(b, rho): b_c = <omega, mu_c> = R omega_c and rho_c = <omega, v_c> = omega_{K+c} (Appendix B.1)."""
    K, R = _check_K(K), _check_R(R)
    t, was_numpy = _check_omega(omega, K, unit=False)
    return _out(R * t[..., :K], was_numpy), _out(t[..., K:], was_numpy)


def _terms(b, rho, coeffs: dict[int, float], xp=torch, *, second: bool = False):
    """Per-cluster value, d/db and d/drho of sum_k a_k rho^k E[h_k(G)(b+G)_+] (Lemma 3); with
    ``second``, also d2/db2, d2/db drho and d2/drho2 (for the analytic Jacobian of the flows).

    ``xp`` is ``torch`` or ``numpy``: the flows call the NumPy path, whose per-call overhead is
    far smaller on the tiny arrays an ODE right-hand side sees. Every derivative in b follows from
    d/db [He_n(b) phi(b)] = -He_{n+1}(b) phi(b).
    """
    dens = xp.exp(-0.5 * b * b) / _SQRT_2PI
    zero = b * 0.0
    val, d_b, d_rho, d_bb, d_brho, d_rhorho = zero, zero, zero, zero, zero, zero
    for k, a in coeffs.items():
        c = a / math.sqrt(math.factorial(k))
        sign = -1.0 if k % 2 else 1.0
        g = sign * _he(k - 2, b) * dens  # E[He_k(G)(b+G)_+] = He_{k-2}(-b) phi(b)
        g_prime = -sign * _he(k - 1, b) * dens
        val = val + c * rho**k * g
        d_b = d_b + c * rho**k * g_prime
        d_rho = d_rho + c * k * rho ** (k - 1) * g
        if second:
            d_bb = d_bb + c * rho**k * sign * _he(k, b) * dens
            d_brho = d_brho + c * k * rho ** (k - 1) * g_prime
            d_rhorho = d_rhorho + c * k * (k - 1) * rho ** (k - 2) * g
    return (val, d_b, d_rho, d_bb, d_brho, d_rhorho) if second else (val, d_b, d_rho)


def _euclidean_hessian_blocks(t, K: int, R: float, coeffs: dict[int, float]):
    """Hessian of Phi in R^{2K} (NumPy, batched over rows of ``t``): Phi is a sum over clusters of a
    function of (b_c, rho_c) = (R t_c, t_{K+c}), so only the entries (c, c), (c, K+c), (K+c, K+c)
    are non-zero. Returns the full ``(..., 2K, 2K)`` array."""
    b, rho = R * t[..., :K], t[..., K:]
    d_bb, d_brho, d_rhorho = _terms(b, rho, coeffs, np, second=True)[3:]
    hess = np.zeros(t.shape + (2 * K,))
    idx = np.arange(K)
    hess[..., idx, idx] = R * R * d_bb / K
    hess[..., idx, K + idx] = R * d_brho / K
    hess[..., K + idx, idx] = R * d_brho / K
    hess[..., K + idx, K + idx] = d_rhorho / K
    return hess


def _phi_and_grad(t, K: int, R: float, coeffs: dict[int, float], xp=torch):
    """Phi (Lemma 3 formula) and its gradient in R^{2K}; ``t`` unchecked, ``xp`` torch or numpy."""
    b, rho = R * t[..., :K], t[..., K:]
    val, d_b, d_rho = _terms(b, rho, coeffs, xp)
    phi = val.sum(-1) / K
    grad = xp.concatenate([R * d_b, d_rho], -1) / K
    return phi, grad


def population_correlation(omega, K: int, R: float, *, coeffs: Mapping[int, float] | None = None):
    """Phi(omega) = E[y relu(omega^T x)] in closed form (Lemma 3), for unit rows of ``omega``.

    ``omega``: array or tensor of shape ``(..., 2K)`` with unit rows; returns shape ``(...)`` of the
    same type. Pure cubic target: Phi = -(1/(K sqrt 6)) sum_c b_c phi(b_c) rho_c^3. For a
    non-unit w, E[y relu(w^T x)] = ||w|| Phi(w / ||w||) (ReLU homogeneity).
    """
    K, R = _check_K(K), _check_R(R)
    coeffs = check_hermite_coeffs(coeffs)
    t, was_numpy = _check_omega(omega, K, unit=True)
    return _out(_phi_and_grad(t, K, R, coeffs)[0], was_numpy)


def euclidean_gradient(omega, K: int, R: float, *, coeffs: Mapping[int, float] | None = None):
    """Gradient in R^{2K} of the Lemma-3 formula read as a function of (b, rho) = (R omega_{:K}, omega_{K:}).

    (Eq. 16: d/db_c = -(1/(K sqrt 6)) (1 - b_c^2) phi(b_c) rho_c^3, d/drho_c = -(3/(K sqrt 6))
    b_c phi(b_c) rho_c^2 for the pure cubic.) No unit-norm check: this is the extension off the
    sphere that :func:`spherical_gradient` projects and :func:`spherical_hessian` differentiates.
    """
    K, R = _check_K(K), _check_R(R)
    t, was_numpy = _check_omega(omega, K, unit=False)
    return _out(_phi_and_grad(t, K, R, check_hermite_coeffs(coeffs))[1], was_numpy)


def spherical_gradient(omega, K: int, R: float, *, coeffs: Mapping[int, float] | None = None):
    """Riemannian gradient grad_S Phi(omega) = (I - omega omega^T) grad Phi(omega) on S^{2K-1} (eq. 17).

    Closed form, batched over unit rows of ``omega`` (shape ``(..., 2K)``); same type as the input.
    """
    K, R = _check_K(K), _check_R(R)
    t, was_numpy = _check_omega(omega, K, unit=True)
    g = _phi_and_grad(t, K, R, check_hermite_coeffs(coeffs))[1]
    return _out(g - t * (t * g).sum(dim=-1, keepdim=True), was_numpy)


def spherical_hessian(omega, K: int, R: float, *, coeffs: Mapping[int, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Riemannian Hessian of Phi at one unit ``omega`` (shape ``(2K,)``), restricted to the tangent space.

    Returns ``(H, B)``: ``B`` is a ``(2K, 2K-1)`` orthonormal basis of the tangent space and
    ``H = B^T (hess Phi - <omega, grad Phi> I) B`` the ``(2K-1, 2K-1)`` symmetric Hessian in that
    basis (the standard formula for a sphere, valid for any smooth extension of Phi). The
    Euclidean Hessian is obtained by autograd through the closed-form gradient, in float64.
    """
    K, R = _check_K(K), _check_R(R)
    coeffs = check_hermite_coeffs(coeffs)
    t, _ = _check_omega(omega, K, unit=True)
    if t.ndim != 1:
        raise ValueError(f"omega must be a single vector of shape ({2 * K},), got {tuple(t.shape)}")
    w = t.detach().to(torch.float64).cpu()
    euclid_hess = torch.autograd.functional.jacobian(lambda x: _phi_and_grad(x, K, R, coeffs)[1], w)
    grad = _phi_and_grad(w, K, R, coeffs)[1]
    # orthonormal basis of omega's orthogonal complement: the last 2K-1 left singular vectors
    u_mat = torch.linalg.svd(w[:, None], full_matrices=True)[0]
    basis = u_mat[:, 1:]
    h = basis.T @ (euclid_hess - (w @ grad) * torch.eye(2 * K, dtype=torch.float64)) @ basis
    h = 0.5 * (h + h.T)
    return h.numpy(), basis.numpy()
