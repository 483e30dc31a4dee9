"""The PDF's tables (book/_ext/latex_tables.py): columns keep their numbers whole, and a table too
wide for the body's type is set smaller."""
import sys
from pathlib import Path

import pytest

docutils = pytest.importorskip("docutils")
from docutils import nodes  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import latex_tables  # noqa: E402


def _table(header: list[str], body: list[list[str]]) -> nodes.table:
    group = nodes.tgroup(cols=len(header))
    group += [nodes.colspec(colwidth=1) for _ in header]

    def row(cells):
        r = nodes.row()
        r += [nodes.entry("", nodes.paragraph(text=c)) for c in cells]
        return r

    group += nodes.thead("", row(header))
    group += nodes.tbody("", *(row(cells) for cells in body))
    table = nodes.table()
    table += group
    return table


def test_a_narrow_table_keeps_the_body_size_and_its_numbers_whole():
    table = _table(["n", "test MSE"], [["20\u2009000", "0.0123"]])
    assert latex_tables._widths_from_content(table) is None
    widths = [c["colwidth"] for c in table.findall(nodes.colspec)]
    assert widths[0] >= len("20\u2009000") and widths[1] >= len("0.0123")


def test_a_wide_table_is_set_smaller_with_every_body_word_whole():
    header = [f"column number {i}" for i in range(19)]
    body = [["1\u2009024"] * 18 + ["does not reproduce"]]
    table = _table(header, body)
    size = latex_tables._widths_from_content(table)
    assert size in dict(latex_tables.SMALLER)
    widths = [c["colwidth"] for c in table.findall(nodes.colspec)]
    assert all(w >= len("1\u2009024") for w in widths[:18]) and widths[18] >= len("reproduce")
