"""The average gradient outer product (AGOP) of a fitted Laplace predictor (Appendix A.2).

For f(x) = sum_i alpha_i exp(-||M^{1/2}(x - x_i)|| / h), with z = M^{1/2} x,

    grad_z f(z) = -(1/h) sum_i alpha_i k(z, z_i) (z - z_i) / ||z - z_i||,
    grad_x f(x) = M^{1/2} grad_z f(z),

so the AGOP G = (1/m) sum_j grad f(x_j) grad f(x_j)^T = M^{1/2} G_z M^{1/2} is computed in closed
form, in blocks of evaluation points. The Laplace kernel is not differentiable where z = z_i;
like the RFM reference code, the term of a training point at zero distance (the point itself when
the AGOP is evaluated on training data) is left out -- it is the one-sided limit's average, zero.
Distances are computed in float64 here, because 1 / ||z - z_i|| amplifies float32 round-off.

RFM (Radhakrishnan et al. 2024, ref. [25]) estimates G on at most m = 20 000 training points
(a seeded subsample) and uses a normalized G as the next metric. ``normalize``: ``"max"`` divides
by the largest eigenvalue (spectral norm 1), ``"trace"`` by the trace, ``None`` keeps G. With a
bandwidth recomputed from median distances after each update the scale cancels, so the choice
does not change the fit (a tested fact). xrfm divides by the largest *entry*, which for a PSD
matrix is the largest diagonal entry: again only a scale.
"""

from __future__ import annotations

import numpy as np
import torch

from ..device import torch_generator
from .laplace import block_rows, default_block_bytes, pairwise_distances

__all__ = ["laplace_gradients", "agop_from_gradients", "agop", "normalize_metric", "NORMALIZATIONS", "AGOP_MAX_SAMPLES"]

#: Appendix A.2: "using at most m = 20 000 training examples".
AGOP_MAX_SAMPLES = 20_000
NORMALIZATIONS = ("max", "trace", None)


def laplace_gradients(
    Zq: torch.Tensor,
    Z: torch.Tensor,
    alpha: torch.Tensor,
    bandwidth: float,
    *,
    self_index: torch.Tensor | None = None,
    block_bytes: int | None = None,
    zero_tol: float = 1e-6,
) -> torch.Tensor:
    """``(m, d)`` gradients grad_z f at the rows of ``Zq`` of f(z) = sum_i alpha_i exp(-||z - z_i|| / h).

    Computed in float64. Terms at zero distance are left out (see the module docstring): those
    with ||z - z_i|| <= ``zero_tol`` * h, and, when ``self_index[j]`` gives the training index of
    query row j, the pair (j, self_index[j]) whatever its rounded distance. Blocks of
    ``block_bytes`` (``None``: :func:`~monosem.kernels.laplace.default_block_bytes` of the device).
    """
    Zq = Zq.to(torch.float64)
    Z = Z.to(torch.float64)
    a = alpha.to(torch.float64)
    sq = (Z * Z).sum(1)
    out = torch.empty_like(Zq)
    step = block_rows(Z.shape[0], torch.float64, default_block_bytes(Zq.device) if block_bytes is None else block_bytes)
    h = float(bandwidth)
    for start in range(0, Zq.shape[0], step):
        Zb = Zq[start : start + step]
        D = pairwise_distances(Zb, Z, sq2=sq)
        W = torch.exp(-D / h) * a
        mask = D > zero_tol * h
        if self_index is not None:
            rows = torch.arange(Zb.shape[0], device=Zb.device)
            mask[rows, self_index[start : start + step].to(Zb.device)] = False
        W = torch.where(mask, W / torch.where(mask, D, torch.ones_like(D)), torch.zeros_like(D))
        out[start : start + step] = -(Zb * W.sum(1, keepdim=True) - W @ Z) / h
    return out


def agop_from_gradients(grads: torch.Tensor, *, centered: bool = False) -> torch.Tensor:
    """(1/m) sum_j g_j g_j^T of ``(m, d)`` gradients (optionally of the centred gradients)."""
    if centered:
        grads = grads - grads.mean(0, keepdim=True)
    return grads.T @ grads / grads.shape[0]


def normalize_metric(G: torch.Tensor, normalize: str | None) -> torch.Tensor:
    """G divided by its largest eigenvalue (``"max"``), its trace (``"trace"``), or unchanged (``None``)."""
    if normalize is None:
        return G
    if normalize == "max":
        scale = torch.linalg.eigvalsh(G)[-1]
    elif normalize == "trace":
        scale = torch.trace(G)
    else:
        raise ValueError(f"normalize={normalize!r} is not allowed; use one of {list(NORMALIZATIONS)}")
    if not float(scale) > 0:
        raise ValueError("the AGOP is zero (a constant predictor): it cannot be normalized into a metric")
    return G / scale


def agop(
    model,
    X=None,
    *,
    max_samples: int | None = AGOP_MAX_SAMPLES,
    seed: int = 0,
    normalize: str | None = None,
    centered: bool = False,
) -> np.ndarray:
    """The AGOP (1/m) sum_j grad f(x_j) grad f(x_j)^T of a fitted :class:`LaplaceKernelRegressor`.

    ``X`` defaults to the model's training inputs; at most ``max_samples`` of its rows (a seeded
    random subset) are used. Returns a ``(d, d)`` float64 NumPy array, normalized as asked.
    """
    G = model.agop_tensor(X, max_samples=max_samples, seed=seed, centered=centered)
    return normalize_metric(G, normalize).cpu().numpy()


def subsample_rows(n: int, max_samples: int | None, seed: int) -> torch.Tensor | None:
    """Indices of a seeded random subset of ``max_samples`` rows out of ``n`` (None: all rows)."""
    if max_samples is None or n <= max_samples:
        return None
    return torch.randperm(n, generator=torch_generator(seed))[:max_samples]
