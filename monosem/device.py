"""Where tensors live and how every random number generator is seeded.

This is the single place that picks the torch device and the default floating-point type, so a
notebook, a test and the CLI all agree. ``MONOSEM_DEVICE`` (e.g. ``cpu``, ``cuda``, ``cuda:1``)
overrides the automatic choice; ``MONOSEM_DTYPE`` (``float32`` or ``float64``) overrides the
default dtype.
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch

from .checks import check_int

__all__ = ["get_device", "default_dtype", "seed_everything", "torch_generator", "resolve_dtype"]

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def get_device(device: str | torch.device | None = None) -> torch.device:
    """The torch device to compute on.

    Order of precedence: the explicit ``device`` argument, the ``MONOSEM_DEVICE`` environment
    variable, then ``cuda`` if available, else ``cpu``.
    """
    if device is None:
        device = os.environ.get("MONOSEM_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device={device!r} is not a torch device (e.g. 'cpu', 'cuda', 'cuda:0')") from err
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was requested but CUDA is not available on this machine")
    return dev


def resolve_dtype(dtype: torch.dtype | str | None = None) -> torch.dtype:
    """A floating torch dtype from ``dtype`` (a torch dtype or ``'float32'``/``'float64'``).

    ``None`` means :func:`default_dtype`. Anything else raises a ``ValueError`` naming the allowed
    values.
    """
    if dtype is None:
        return default_dtype()
    if isinstance(dtype, str):
        if dtype not in _DTYPES:
            raise ValueError(f"dtype={dtype!r} is not allowed; use one of {sorted(_DTYPES)}")
        return _DTYPES[dtype]
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype={dtype!r} is not allowed; use torch.float32 or torch.float64")
    return dtype


def default_dtype() -> torch.dtype:
    """float32 unless ``MONOSEM_DTYPE=float64`` (the experiments' working precision)."""
    name = os.environ.get("MONOSEM_DTYPE", "float32")
    if name not in _DTYPES:
        raise ValueError(f"MONOSEM_DTYPE={name!r} is not allowed; use one of {sorted(_DTYPES)}")
    return _DTYPES[name]


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's global generators (CPU and every GPU) from one integer.

    Library code in monosem never relies on global state: it takes explicit seeds and builds its
    own generators (:func:`torch_generator`). This function is for notebooks and scripts, so that
    anything *else* they call is reproducible too.
    """
    seed = _check_seed(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def torch_generator(seed: int) -> torch.Generator:
    """A fresh CPU ``torch.Generator`` seeded with ``seed``.

    Random numbers are drawn on the CPU and then moved to the compute device: CPU and CUDA
    generators produce different streams, and the data sets must be identical on every device so
    that results computed on a GPU and on a laptop are about the same draws.
    """
    gen = torch.Generator(device="cpu")
    gen.manual_seed(_check_seed(seed))
    return gen


def _check_seed(seed: int) -> int:
    return check_int(seed, "seed", 0)
