"""Atomic file writes: a file is either absent or complete, never half-written.

Results (JSON), trained networks and training checkpoints (torch tensors) are all written
through :func:`atomic_write`: a temporary file in the same folder, flushed to disk, then renamed
over the target. An interrupted run therefore never leaves a truncated file behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator

import torch

__all__ = ["atomic_write", "atomic_write_json", "atomic_torch_save", "quarantine"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file beside ``path``; on a clean exit it replaces ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    # mkstemp creates the file 0600; give it the mode an ordinary open() would (the umask's), so
    # that a cache shared by a group stays readable to it
    os.chmod(tmp, 0o666 & ~_umask())
    try:
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if "b" not in mode else {})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write ``obj`` as JSON to ``path`` atomically."""
    with atomic_write(path) as fh:
        json.dump(obj, fh, indent=1, sort_keys=True, allow_nan=True)


def atomic_torch_save(obj: Any, path: str | os.PathLike) -> None:
    """``torch.save`` to ``path`` atomically (read back with ``torch.load(..., weights_only=True)``)."""
    with atomic_write(path, "wb") as fh:
        torch.save(obj, fh)


def quarantine(path: str | os.PathLike, why: str, then: str = "recomputed") -> Path:
    """Move a damaged file aside (``<name>.corrupt``, replacing an older one) and warn, naming it,
    the reason and ``then``, what becomes of what it held (the default: the caller recomputes it
    now); returns the new path."""
    import warnings

    path = Path(path)
    target = path.with_name(path.name + ".corrupt")
    os.replace(path, target)
    warnings.warn(f"{path} is damaged ({why}); moved aside to {target.name} and {then}", RuntimeWarning, stacklevel=3)
    return target
