"""What the question modules of pages 09 and 10 (:mod:`.overlap`, :mod:`.rare_regimes`,
:mod:`.experts`, :mod:`.routing_or_features`, :mod:`.drift`) share: the numbers of their verdicts'
prose, and their rows as DataFrames."""

from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np
import pandas as pd

__all__ = ["fmt", "frame"]


def fmt(v, spec: str = ".3g") -> str:
    """``v`` formatted by ``spec``, or ``-`` when it is missing (None) or not finite."""
    return "-" if v is None or (isinstance(v, float) and not np.isfinite(v)) else format(v, spec)


def _column(values: list) -> Any:
    """A column's values with the dtype their kind asks for: integers (nullable ``Int64`` where one
    is missing), floats (NaN where missing), anything else as it is."""
    present = [v for v in values if v is not None]
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in present):
        return values
    if present and all(isinstance(v, numbers.Integral) for v in present):
        return pd.array(values, dtype="Int64" if len(present) < len(values) else "int64")
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def frame(rows: Sequence[dict[str, Any]], columns: Sequence[str], index: str | list[str]) -> pd.DataFrame:
    """``rows`` (one dict per table row, keyed by ``columns``; a key left out is a missing value)
    as a DataFrame indexed by ``index`` (one or several of ``columns``). A column of numbers and
    missing values (None) holds integers or floats, not strings."""
    data = {c: _column([r.get(c) for r in rows]) for c in columns}
    return pd.DataFrame(data, columns=list(columns)).set_index(index)
