"""Summaries of a learned metric M (an RFM AGOP): its spectrum, effective rank, where its trace
sits, and how much of a known subspace its top eigenvectors capture (Section 1, page 01).

Plain NumPy/SciPy on a d x d matrix: principal angles come from ``scipy.linalg.subspace_angles``
and the orthonormal basis of the true directions from ``scipy.linalg.orth`` (rank-revealing, so
K > rank directions, e.g. K = 50 directions in 10 predictive coordinates, are handled).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import orth, subspace_angles

__all__ = ["normalized_spectrum", "effective_rank", "trace_share", "subspace_capture"]


def _symmetric(M, name: str = "M") -> np.ndarray:
    M = np.asarray(M.detach().cpu() if hasattr(M, "detach") else M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {M.shape}")
    if not np.allclose(M, M.T, rtol=1e-8, atol=1e-12 * max(1.0, np.abs(M).max())):
        raise ValueError(f"{name} must be symmetric")
    return 0.5 * (M + M.T)


def normalized_spectrum(M) -> np.ndarray:
    """Eigenvalues of the symmetric PSD matrix ``M`` in decreasing order, divided by the largest
    (round-off negatives clipped to 0)."""
    ev = np.clip(np.linalg.eigvalsh(_symmetric(M))[::-1], 0.0, None)
    if ev[0] <= 0:
        raise ValueError("M has no positive eigenvalue")
    return ev / ev[0]


def effective_rank(M) -> float:
    """Participation ratio (tr M)^2 / tr(M^2): 1 for rank one, d for a multiple of I_d."""
    M = _symmetric(M)
    return float(np.trace(M) ** 2 / np.trace(M @ M))


def trace_share(M, block: tuple[int, int]) -> float:
    """Share of tr M on the coordinates ``block = (start, stop)`` (e.g. a model's predictive block)."""
    M = _symmetric(M)
    start, stop = block
    if not 0 <= start < stop <= M.shape[0]:
        raise ValueError(f"block={block!r} must satisfy 0 <= start < stop <= {M.shape[0]}")
    return float(np.trace(M[start:stop, start:stop]) / np.trace(M))


def subspace_capture(M, directions, k: int | None = None) -> float:
    """Mean squared cosine of the principal angles between the top-``k`` eigenvectors of ``M`` and
    span(``directions``) (rows): 1 when they span the same subspace, 0 when orthogonal.

    ``directions``: ``(K, d)``; ``k`` defaults to the rank of the directions. At K = 1 this is
    cos^2 of the angle between the top eigenvector and v.
    """
    M = _symmetric(M)
    V = np.asarray(directions.detach().cpu() if hasattr(directions, "detach") else directions, dtype=np.float64)
    if V.ndim != 2 or V.shape[1] != M.shape[0]:
        raise ValueError(f"directions must have shape (K, {M.shape[0]}), got {V.shape}")
    basis = orth(V.T)
    k = basis.shape[1] if k is None else int(k)
    if not 1 <= k <= M.shape[0]:
        raise ValueError(f"k={k} must be in [1, {M.shape[0]}]")
    top = np.linalg.eigh(M)[1][:, ::-1][:, :k]
    return float(np.mean(np.cos(subspace_angles(top, basis)) ** 2))
