"""What the book's pages share beyond the experiments: numbers glued into their prose and the
display of tables.

Every number in a page's prose is computed by the page and inserted with myst-nb's ``glue``
(``{glue:text}`name:fmt```), so the prose cannot drift from the computation. Outside a book
build (Colab, a plain Jupyter) myst-nb may be missing: the value is then only returned.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["glue", "table_style"]


def glue(name: str, value: Any) -> None:
    """Store ``value`` under ``name`` for the page's prose (not displayed where it is computed)."""
    try:
        from myst_nb import glue as _glue
    except ImportError:  # a reader's notebook without the book's tools: nothing to insert into
        return
    _glue(name, value, display=False)


def table_style() -> None:
    """Pandas display settings of the pages: three significant digits, every column shown."""
    pd.set_option("display.float_format", "{:.3g}".format)
    pd.set_option("display.max_columns", 40)
    pd.set_option("display.width", 160)
    pd.set_option("display.max_colwidth", 120)
