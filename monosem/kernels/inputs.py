"""Input conversion and validation shared by the kernel estimators.

Every public entry point of :mod:`monosem.kernels` accepts NumPy arrays (or anything
:func:`numpy.asarray` understands) and torch tensors, and raises a ``ValueError`` that names the
offending parameter. Tensors already on the compute device are used in place (no host round
trip), which matters on a GPU.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
from sklearn.exceptions import DataConversionWarning
from sklearn.utils import check_array

from ..checks import check_positive  # noqa: F401  (re-exported for the kernel modules)

__all__ = ["as_matrix", "as_vector", "as_groups", "check_metric", "check_positive", "to_numpy"]


def _to_tensor(a, name: str, device: torch.device, dtype: torch.dtype, *, ensure_2d: bool) -> torch.Tensor:
    if a is None:
        raise ValueError(f"{name} is None; this estimator requires y to be passed, but the target y is None" if name == "y" else f"{name} is None")
    if isinstance(a, torch.Tensor):
        t = a.detach()
        if t.is_complex():
            raise ValueError(f"{name} must be real, got a complex {t.dtype} tensor")
        return t.to(device=device, dtype=dtype)
    # scikit-learn's validator gives the messages its estimator checks expect (complex data,
    # object dtypes, sparse matrices, 1-d X, empty arrays)
    arr = check_array(
        a, dtype=np.float64, ensure_2d=ensure_2d, ensure_all_finite=False, input_name=name,
        ensure_min_samples=1 if ensure_2d else 0, copy=True,
    )
    return torch.from_numpy(arr).to(device=device, dtype=dtype)


def as_matrix(
    X, name: str, device: torch.device, dtype: torch.dtype, n_features: int | None = None, owner: str = "estimator"
) -> torch.Tensor:
    """``X`` as a finite ``(n, d)`` tensor with ``n >= 1`` (and ``d == n_features`` if given)."""
    t = _to_tensor(X, name, device, dtype, ensure_2d=True)
    if t.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array of shape (n_samples, n_features), got shape {tuple(t.shape)}")
    if t.shape[0] < 1 or t.shape[1] < 1:
        raise ValueError(f"{name} must have at least one sample and one feature, got shape {tuple(t.shape)}")
    if n_features is not None and t.shape[1] != n_features:
        raise ValueError(f"{name}: X has {t.shape[1]} features, but {owner} is expecting {n_features} features as input")
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} contains NaN or infinity")
    return t


def as_vector(y, name: str, n: int, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """``y`` as a finite ``(n,)`` tensor (a ``(n, 1)`` column is accepted and flattened)."""
    t = _to_tensor(y, name, device, dtype, ensure_2d=False)
    if t.ndim == 2 and t.shape[1] == 1:
        warnings.warn(
            f"A column-vector {name} was passed when a 1d array was expected; it is flattened",
            DataConversionWarning, stacklevel=3,
        )
        t = t[:, 0]
    if t.ndim != 1 or t.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},) to match X, got {tuple(t.shape)}")
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} contains NaN or infinity")
    return t


def as_groups(groups, n: int, device: torch.device) -> torch.Tensor:
    """Integer group (cluster) labels of shape ``(n,)``."""
    if isinstance(groups, torch.Tensor):
        g = groups.detach().to(device)
    else:
        arr = np.asarray(groups)
        if not np.issubdtype(arr.dtype, np.integer):
            if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
                arr = arr.astype(np.int64)
            else:
                raise ValueError(f"groups must hold integer cluster labels, got dtype {arr.dtype}")
        g = torch.from_numpy(np.ascontiguousarray(arr, dtype=np.int64)).to(device)
    if g.is_floating_point():
        if not bool((g == g.round()).all()):
            raise ValueError("groups must hold integer cluster labels")
        g = g.long()
    if g.ndim != 1 or g.shape[0] != n:
        raise ValueError(f"groups must have shape ({n},) to match X, got {tuple(g.shape)}")
    return g.long()


def check_metric(metric, d: int, *, rtol: float = 1e-8) -> torch.Tensor:
    """A symmetric positive semi-definite ``(d, d)`` metric as a float64 CPU tensor.

    Asymmetry beyond ``rtol`` (relative to the largest entry) or an eigenvalue below
    ``-rtol * lambda_max`` raises a ``ValueError``.
    """
    M = _to_tensor(metric, "metric", torch.device("cpu"), torch.float64, ensure_2d=True)
    if M.shape != (d, d):
        raise ValueError(f"metric must have shape ({d}, {d}) to match X, got {tuple(M.shape)}")
    if not bool(torch.isfinite(M).all()):
        raise ValueError("metric contains NaN or infinity")
    scale = float(M.abs().max())
    if scale == 0.0:
        raise ValueError("metric is the zero matrix; every distance would vanish")
    if float((M - M.T).abs().max()) > rtol * scale:
        raise ValueError("metric must be symmetric")
    M = 0.5 * (M + M.T)
    lam_min = float(torch.linalg.eigvalsh(M)[0])
    if lam_min < -rtol * scale:
        raise ValueError(f"metric must be positive semi-definite; its smallest eigenvalue is {lam_min:.3g}")
    return M





def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A float64 NumPy copy of a tensor on any device."""
    return t.detach().to("cpu", torch.float64).numpy()
