"""What the book's pages share beyond the experiments: numbers glued into their prose and the
display of tables.

Every number in a page's prose is computed by the page and inserted with myst-nb's ``glue``
(``{glue:text}`name:fmt```), so the prose cannot drift from the computation. Outside a book
build (Colab, a plain Jupyter) myst-nb may be missing: the value is then only returned.
"""

from __future__ import annotations

import json
import numbers
import os
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from . import tables
from .atomic import atomic_write_json
from .experiments.verdicts import Claim

__all__ = ["glue", "table_style", "verdict_box", "findings_box", "publish_claims", "load_claims"]


def glue(name: str, value: Any) -> None:
    """Store ``value`` under ``name`` for the page's prose (not displayed where it is computed); a
    number is stored in the tables' format (:func:`monosem.tables.number`), so that prose and
    tables print it alike."""
    try:
        from myst_nb import glue as _glue
    except ImportError:  # a reader's notebook without the book's tools: nothing to insert into
        return
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = tables.number(value)
    _glue(name, value, display=False)


def table_style() -> None:
    """How the pages display tables: every DataFrame in the book's number format, folded when
    long and with its CSV (:func:`monosem.tables.install`); as plain text (a console), three
    significant digits, every column and every character of a cell shown."""
    tables.install()
    pd.set_option("display.float_format", "{:.3g}".format)
    pd.set_option("display.max_columns", 40)
    pd.set_option("display.width", 160)
    pd.set_option("display.max_colwidth", None)  # verdict evidence lists every run: never cut it


def verdict_box(claims: Iterable[Claim]):
    """The page's verdict box (a MyST admonition holding a table), for ``{glue:md}`` at the top of
    the page."""
    from IPython.display import Markdown  # a notebook's display; not needed by the rest of the package

    rows = ["| the paper's claim | scale | verdict | the numbers |", "|---|---|---|---|"]
    for c in claims:
        rows.append(f"| {c.claim} | {c.scale} | **{c.verdict}** | {c.evidence} |")
    return Markdown("\n".join([":::{admonition} Does it reproduce?", ":class: tip", "", *rows, ":::"]))


def findings_box(findings: Iterable[tuple[str, str, str]]):
    """A page's box of answers to questions beyond the paper, ``(question, scale, answer)`` each
    (no claim of the paper to judge: the status page lists these pages apart), for
    ``{glue:md} findings_box`` at the top of the page."""
    from IPython.display import Markdown

    rows = ["| the question | scale | what this build finds |", "|---|---|---|"]
    rows += [f"| {q} | {scale} | {answer} |" for q, scale, answer in findings]
    return Markdown("\n".join([":::{admonition} What this page finds (beyond the paper)", ":class: tip", "", *rows, ":::"]))


def publish_claims(page: str, claims: Iterable[Claim]) -> list[Claim]:
    """Glue the page's verdict box and, in a book build (``MONOSEM_CLAIMS`` names a folder),
    write its claims there for the status page, which therefore shows what the pages computed."""
    claims = list(claims)
    glue("verdict_box", verdict_box(claims))
    folder = os.environ.get("MONOSEM_CLAIMS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        atomic_write_json(Path(folder) / f"{page}.json", [asdict(c) for c in claims])
    return claims


def load_claims(folder: str | os.PathLike) -> pd.DataFrame:
    """Every page's claims written by :func:`publish_claims` into ``folder``, one row each."""
    rows = []
    for path in sorted(Path(folder).glob("*.json")) if Path(folder).is_dir() else ():
        rows += json.loads(path.read_text(encoding="utf-8"))
    return pd.DataFrame(rows, columns=[f.name for f in fields(Claim)])
