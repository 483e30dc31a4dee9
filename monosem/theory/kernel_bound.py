"""The kernel / RFM side of Theorem 2 (Appendix B.2.3, Lemmas 15-17).

* Lemma 15 -- :func:`invariant_subspace_mc`: a Monte-Carlo check of
  E dist(v, S)^2 >= (1 - N/D)_+ ||v||^2 for a random subspace S of dimension <= N with an
  invariant law, on the irreducible O(K) representation V_{2,K} (traceless symmetric matrices).
* Lemma 16 -- :func:`kernel_lower_bound`: sum_{r>=2} ghat_r^2 alpha_{r,K} (1 - n/H_{r,K})_+,
  summed to ``r_max`` with the omitted orders bounded by the Hermite tail
  (:func:`kernel_lower_bound_tail`).
* Lemma 17 -- :func:`polynomial_budget_floor`: the liminf floor sum_{r>=2, r>A} ghat_r^2 for
  n = O(K^A).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch

from ..checks import check_int, check_nonnegative
from ..device import torch_generator
from .harmonic import harmonic_dimension, harmonic_energy
from .hermite import clipped_ramp_hermite_coefficients, hermite_tail

__all__ = [
    "DEFAULT_R_MAX",
    "kernel_lower_bound",
    "kernel_lower_bound_tail",
    "polynomial_budget_floor",
    "kernel_bound_onset",
    "invariant_subspace_mc",
]

#: Truncation order of Lemma 16's sum; the omitted orders weigh at most hermite_tail(400) < 1e-5.
DEFAULT_R_MAX = 400


def _check_r_max(r_max: int) -> int:
    return check_int(r_max, "r_max", 2)


def kernel_lower_bound(n: float | np.ndarray, K: int, r_max: int = DEFAULT_R_MAX) -> float | np.ndarray:
    """Lemma 16's lower bound on the L^2 risk of every rotationally invariant kernel ridge
    regression and of RFM with the ground-truth AGOP M_rho (any rho >= 0, any ridge):

        LB(n, K) = sum_{r=2}^{r_max} ghat_r^2 alpha_{r,K} (1 - n / H_{r,K})_+ .

    Every summand is non-negative, so the truncated sum is itself a valid lower bound; the
    omitted orders add at most :func:`kernel_lower_bound_tail` ``(r_max)``. ``n`` may be an array.
    Requires K >= 2 (for K = 1 there is no harmonic space of order >= 2).
    """
    K = check_int(K, "K", 2)
    r_max = _check_r_max(r_max)
    n_arr = np.asarray(n, dtype=np.float64)
    if not np.all(np.isfinite(n_arr)) or np.any(n_arr < 0):
        raise ValueError(f"n={n!r} must be a finite sample size >= 0")
    weights, H = _order_weights(int(K), r_max)
    out = (weights * np.clip(1.0 - n_arr[..., None] / H, 0.0, None)).sum(axis=-1)
    return float(out) if out.ndim == 0 else out


@lru_cache(maxsize=256)
def _order_weights(K: int, r_max: int) -> tuple[np.ndarray, np.ndarray]:
    """ghat_r^2 alpha_{r,K} and H_{r,K} (as floats) for r = 2..r_max."""
    g2 = clipped_ramp_hermite_coefficients(r_max)[2:] ** 2
    orders = range(2, r_max + 1)
    # H_{r,K} overflows float64 only for astronomically large (r, K); cap at 1e300 (n/H ~ 0 there)
    H = np.array([float(min(harmonic_dimension(r, K), 10**300)) for r in orders])
    alpha = np.array([harmonic_energy(r, K) for r in orders])
    return g2 * alpha, H


def kernel_bound_onset(A: float, fraction: float = 0.5, K_max: int = 2**40) -> int | None:
    """Smallest K = 2^j (K <= K_max) at which LB(n = K^A, K) reaches ``fraction`` of Lemma 17's floor.

    A finite-K reading of "where the asymptotic statement bites"; ``None`` if not reached.
    """
    if not (isinstance(fraction, (int, float)) and 0 < fraction < 1):
        raise ValueError(f"fraction={fraction!r} must lie in (0, 1)")
    floor = polynomial_budget_floor(A)
    K = 2
    while K <= K_max:
        if kernel_lower_bound(float(K) ** A, K) >= fraction * floor:
            return K
        K *= 2
    return None


def kernel_lower_bound_tail(r_max: int = DEFAULT_R_MAX) -> float:
    """Upper bound on the orders r > r_max omitted by :func:`kernel_lower_bound`: sum_{r>r_max} ghat_r^2."""
    return float(hermite_tail(_check_r_max(r_max)))


def polynomial_budget_floor(A: float) -> float:
    """Lemma 17: liminf_K of the kernel/RFM risk for n_K = O(K^A) is at least sum_{r>=2, r>A} ghat_r^2.

    Computed from Parseval as E g^2 - sum_{r <= max(1, floor(A))} ghat_r^2, exactly in float64.
    """
    A = check_nonnegative(A, "A")
    return float(hermite_tail(max(1, math.floor(A))))


def _traceless(mats: torch.Tensor) -> torch.Tensor:
    K = mats.shape[-1]
    eye = torch.eye(K, dtype=mats.dtype)
    return mats - mats.diagonal(dim1=-2, dim2=-1).sum(-1)[..., None, None] * eye / K


def invariant_subspace_mc(
    K: int, N: int, n_draws: int = 2000, *, seed: int = 0, anisotropy: float = 1.0
) -> dict[str, float]:
    """Lemma 15 on V = V_{2,K}, traceless symmetric K x K matrices (dimension D = H_{2,K}).

    S = span of the traceless parts of x_i x_i^T, i = 1..N, with x_i ~ N(0, Sigma) -- the
    order-2 harmonic parts of N kernel sections. For Sigma = I_K (``anisotropy=1``) the law of S is
    O(K)-invariant and Lemma 15 applies to v = traceless part of e_1 e_1^T (||v||^2 = alpha_{2,K});
    because dim S = min(N, D) almost surely the bound is then an *equality* in expectation.
    ``anisotropy > 1`` stretches the first coordinate of x_i, which breaks the invariance: the
    bound may then fail, showing that invariance is what the lemma uses.

    Returns the Monte-Carlo mean of dist(v, S)^2, its standard error, the bound
    (1 - N/D)_+ ||v||^2, D and ||v||^2.
    """
    K, N, n_draws = check_int(K, "K", 2), check_int(N, "N", 0), check_int(n_draws, "n_draws", 2)
    if not (isinstance(anisotropy, (int, float)) and math.isfinite(anisotropy) and anisotropy > 0):
        raise ValueError(f"anisotropy={anisotropy!r} must be a positive finite number")
    D = harmonic_dimension(2, K)
    e1 = torch.zeros(K, K, dtype=torch.float64)
    e1[0, 0] = 1.0
    v = _traceless(e1).reshape(-1)
    v_norm2 = float(v @ v)
    if N == 0:
        dist2 = torch.full((n_draws,), v_norm2, dtype=torch.float64)
    else:
        gen = torch_generator(seed)
        x = torch.randn(n_draws, N, K, generator=gen, dtype=torch.float64)
        x[..., 0] *= anisotropy
        span = _traceless(x[..., :, None] * x[..., None, :]).reshape(n_draws, N, K * K).transpose(1, 2)
        # orthonormal basis of S by SVD (rank-revealing), then dist^2 = ||v||^2 - ||Q^T v||^2
        U, s, _ = torch.linalg.svd(span, full_matrices=False)
        keep = s > s[:, :1] * 1e-10
        proj = (U.transpose(1, 2) @ v) * keep
        dist2 = v_norm2 - (proj**2).sum(-1)
    return {
        "mean": float(dist2.mean()),
        "se": float(dist2.std() / math.sqrt(n_draws)),
        "bound": max(0.0, 1.0 - N / D) * v_norm2,
        "D": float(D),
        "v_norm2": v_norm2,
    }
