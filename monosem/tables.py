"""Tables in one number format, for the book's pages and anything else that shows a DataFrame.

This module sits at the bottom of the package, beside :mod:`.plots`: it formats numbers and
DataFrames and knows nothing about experiments, so every layer above can use it.

One format for tables and prose (:func:`number`):

- integers as integers, thousands grouped by a narrow no-break space (``10 000``, never ``1e+04``),
  also when a column holds them as floats because a value is missing;
- other floats to :data:`DIGITS` significant digits, in positional notation between 10^-3 and
  10^6 and as ``1.23×10⁻⁵`` outside it;
- :data:`MISSING` (an em dash) for a value that is undefined or was not computed, never ``NaN`` or
  ``<NA>``.

Prose writes a size with :func:`thousands`, a count of things with :func:`count` (``1 run``,
``5 runs``; :func:`plural` for the word alone), a share with :func:`percent` (``43 %``) and a range
of values with :func:`span` (``2.17–2.48``, one value where both ends print alike).

:func:`html` renders a DataFrame in that format for a notebook (no bare ``0, 1, 2, ...`` index;
a table longer than :data:`FOLD_ROWS` rows folded under a toggle; a link to download its numbers
as CSV) and :func:`install` makes it the way IPython displays every DataFrame and Series.
"""

from __future__ import annotations

import base64
import html as _html
import math
import numbers
import re
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

__all__ = ["DIGITS", "MISSING", "FOLD_ROWS", "THIN", "number", "thousands", "plural", "count", "percent", "span", "is_missing", "format_frame", "html",
           "csv_link", "csv_text", "markdown", "install"]

#: significant digits of a float that is not an integer
DIGITS = 3
#: what an undefined or not computed value shows
MISSING = "—"
#: a table with more rows is folded under a toggle (its first rows stay readable in the CSV link)
FOLD_ROWS = 20
#: the thousands separator: a narrow no-break space (a thin space that never breaks a number)
THIN = "\u202f"

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def is_missing(v: Any) -> bool:
    """Whether ``v`` is a missing or undefined number (None, NaN, ``pd.NA``, ``NaT``, ±inf)."""
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return not math.isfinite(float(v))
    return False


def thousands(n: int) -> str:
    """The integer ``n`` with its thousands grouped by :data:`THIN`, as tables and prose write
    sizes and counts (``50 000``)."""
    return f"{int(n):,}".replace(",", THIN)


def plural(unit: str, n: float) -> str:
    """``unit`` as it reads after the number ``n``: singular for exactly one (``run``), else with an
    s (``runs``; also ``0 runs``)."""
    return unit if n == 1 else f"{unit}s"


def count(n: float, unit: str) -> str:
    """``n`` things in words (``1 run``, ``5 runs``, ``10 000 cells``)."""
    return f"{thousands(n)} {plural(unit, n)}"


def percent(share: float, digits: int = 0, *, sign: bool = False) -> str:
    """The fraction ``share`` as a percentage, as prose writes it (``43 %``: a space before the
    sign); ``sign``: a leading + for a positive change."""
    return f"{100 * share:{'+' if sign else ''}.{digits}f} %"


def number(v: Any, digits: int = DIGITS, *, integer: bool | None = None) -> str:
    """``v`` in the book's number format (see the module's docstring). ``integer``: format a float
    as an integer (a column of counts held as floats); by default only integer types are."""
    if is_missing(v):
        return MISSING
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        return str(v)
    if isinstance(v, numbers.Integral) or (integer and float(v).is_integer()):
        return thousands(int(v))
    x = float(v)
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e6:
        if abs(x) >= 10 ** (digits - 1):  # as many digits before the point as we keep: round to a whole
            return thousands(round(x))
        text = f"{x:.{digits}g}"
        if "e" in text:  # e.g. 0.001 at 3 digits stays positional
            text = np.format_float_positional(x, precision=digits, unique=False, fractional=False, trim="-")
        return text
    mantissa, exponent = f"{x:.{max(digits - 1, 0)}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}×10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def span(values: Iterable[Any], fmt: str | Callable[[Any], str] | None = None, unit: str = "", empty: str = MISSING) -> str:
    """The range of ``values`` as prose quotes it: ``lo–hi`` (an en dash) then ``unit``, or one
    value where both ends print alike; ``empty`` where there is none. ``fmt``: a format
    specification (``".2f"``) or a function of a value; the book's :func:`number` by
    default."""
    present = [v for v in values if not is_missing(v)]
    if not present:
        return empty
    write = number if fmt is None else fmt if callable(fmt) else (lambda v: format(v, fmt))
    lo, hi = write(min(present)), write(max(present))
    return f"{lo}{unit}" if lo == hi else f"{lo}\u2013{hi}{unit}"


def _integer_column(s: pd.Series) -> bool:
    """A column of whole numbers (integer dtype, or floats that are all whole: counts with a gap)."""
    if pd.api.types.is_bool_dtype(s):
        return False
    if pd.api.types.is_integer_dtype(s):
        return True
    if not pd.api.types.is_float_dtype(s):
        return False
    present = s.dropna()
    present = present[np.isfinite(present.to_numpy(dtype=float))]
    return len(present) > 0 and bool(np.all(np.mod(present.to_numpy(dtype=float), 1) == 0)) \
        and bool(np.all(np.abs(present) < 2**53))


def _cell(v: Any, integer: bool) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)):
        return ", ".join(_cell(x, integer) for x in v)
    return number(v, integer=integer)


def format_frame(df: pd.DataFrame | pd.Series) -> pd.DataFrame:
    """``df`` with every value a string in the book's number format (index levels and column labels
    too), for display."""
    frame = df.to_frame() if isinstance(df, pd.Series) else df
    out = pd.DataFrame(index=frame.index, columns=frame.columns, dtype=object)
    for i in range(frame.shape[1]):  # by position: column names may repeat
        col = frame.iloc[:, i]
        integer = _integer_column(col)
        out.iloc[:, i] = [_cell(v, integer) for v in col]
    out.index = _format_index(frame.index)
    out.columns = _format_index(frame.columns)  # e.g. one column per gamma: 4, not 4.0
    return out


def _format_index(index: pd.Index) -> pd.Index:
    if isinstance(index, pd.MultiIndex):
        levels = [_format_index(index.get_level_values(i)) for i in range(index.nlevels)]
        return pd.MultiIndex.from_arrays(levels, names=index.names)
    integer = _integer_column(pd.Series(index))
    return pd.Index([_cell(v, integer) for v in index], name=index.name, dtype=object)


def _bare_index(index: pd.Index) -> bool:
    """An index that says nothing: the default 0, 1, 2, ... with no name."""
    return (not isinstance(index, pd.MultiIndex) and index.name is None
            and (isinstance(index, pd.RangeIndex) or list(index) == list(range(len(index)))))


def csv_text(df: pd.DataFrame | pd.Series) -> str:
    """``df``'s numbers as CSV: full precision, empty fields where a value is missing (the
    format a spreadsheet reads); the index is written unless it is a bare 0, 1, 2, ..."""
    frame = df.to_frame() if isinstance(df, pd.Series) else df
    return frame.to_csv(index=not _bare_index(frame.index), na_rep="", lineterminator="\n")


def csv_link(df: pd.DataFrame | pd.Series, name: str = "table.csv", label: str = "CSV") -> str:
    """An HTML link that downloads ``df``'s numbers as a CSV file (:func:`csv_text`), the file
    carried in the link itself so that a page needs nothing beside it (a notebook on Colab too)."""
    data = base64.b64encode(csv_text(df).encode("utf-8")).decode("ascii")
    return (f'<a class="monosem-csv" download="{_html.escape(name)}" '
            f'href="data:text/csv;charset=utf-8;base64,{data}">{_html.escape(label)}</a>')


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")[:40] or "table"


def html(df: pd.DataFrame | pd.Series, *, fold: int = FOLD_ROWS, name: str | None = None) -> str:
    """``df`` as an HTML table in the book's number format: no bare 0, 1, 2, ... index, a link to
    its numbers as CSV under it, and folded under a toggle when it has more than ``fold`` rows."""
    frame = df.to_frame() if isinstance(df, pd.Series) else df
    if (not isinstance(frame.index, pd.MultiIndex) and frame.index.name is not None
            and not isinstance(frame.columns, pd.MultiIndex) and frame.columns.name is None
            and frame.index.name not in frame.columns):
        # a named index becomes the first column: its name heads it, not a second header row
        frame = frame.reset_index()
    shown = format_frame(frame)
    table = shown.to_html(index=not _bare_index(frame.index), escape=True, border=0, na_rep=MISSING,
                          classes="monosem-table")
    name = name or f"{_slug('-'.join(map(str, frame.columns[:3])))}.csv"
    rows = len(frame)
    link = csv_link(frame, name, f"download these {rows} row{'s' if rows != 1 else ''} as CSV")
    body = f'<div class="monosem-table-wrap" style="overflow-x:auto">{table}</div>\n<p class="monosem-csv-line">{link}</p>'
    if rows > fold:
        return f"<details class=\"monosem-fold\"><summary>Show the table ({rows} rows)</summary>\n{body}\n</details>"
    return body


def markdown(df: pd.DataFrame | pd.Series) -> str | None:
    """``df`` as a Markdown (pipe) table in the book's number format: how a table reaches the
    PDF, whose builder does not read HTML (``None``, no Markdown, without the ``tabulate`` package
    that pandas writes it with)."""
    try:
        import tabulate  # noqa: F401  (pandas' to_markdown needs it)
    except ImportError:
        return None
    frame = df.to_frame() if isinstance(df, pd.Series) else df
    shown = format_frame(frame)
    if isinstance(shown.columns, pd.MultiIndex):  # one header row: the levels joined
        shown.columns = [" ".join(str(level) for level in col if str(level)) for col in shown.columns]
    # the index levels as the first columns (a bare 0, 1, 2, ... left out), not as tuples
    shown = shown.reset_index(drop=_bare_index(frame.index))
    shown.columns = ["" if str(c).startswith("level_") or c == "index" else str(c) for c in shown.columns]
    return shown.to_markdown(index=False)


def install() -> None:
    """Make :func:`html` (and :func:`markdown`, for the PDF) how the running IPython displays every
    DataFrame and Series; outside IPython this does nothing."""
    try:
        from IPython import get_ipython
    except ImportError:  # no IPython: nothing displays tables
        return
    ip = get_ipython()
    if ip is None:
        return
    formatters = ip.display_formatter.formatters
    for kind in (pd.DataFrame, pd.Series):
        formatters["text/html"].for_type(kind, html)
        formatters["text/markdown"].for_type(kind, markdown)
