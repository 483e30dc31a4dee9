"""Progress bars: one rule for every long loop of the package. At the bottom of the package,
beside :mod:`monosem.checks`."""

from __future__ import annotations

import os
from typing import Any, Iterable

from tqdm import tqdm

__all__ = ["progress_bar"]


def progress_bar(iterable: Iterable | None = None, *, progress: bool = True, **kwargs: Any) -> tqdm:
    """A tqdm bar over ``iterable`` (or one updated by hand), shown when ``progress`` is true and
    the environment does not set ``TQDM_DISABLE`` (``1`` or ``true``). ``kwargs`` go to tqdm.

    The environment is read here because an explicit ``disable`` overrides tqdm's own reading of
    ``TQDM_DISABLE``, and older tqdm releases do not read it at all."""
    quiet = not progress or os.environ.get("TQDM_DISABLE", "").lower() in ("1", "true")
    return tqdm(iterable, disable=quiet, **kwargs)
