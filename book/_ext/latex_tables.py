"""Tables that fit the PDF's pages.

LaTeX cannot break a ``tabulary`` (Sphinx's table for a short table) across pages, nor a framed
admonition around one; a verdict box of 18 claims is taller than a page, and XeLaTeX then loops
until its input stack is exhausted. For the LaTeX builder only, this extension turns each
admonition that holds a table into its title (a rubric) followed by its contents, and has Sphinx
set every table of more than :data:`LONG_ROWS` rows as a ``longtable``, which breaks across pages.
Columns get widths in proportion to their longest cell, so that they wrap instead of running off
the page (Sphinx sets a long table's columns of automatic width unbroken). The HTML keeps its boxes and widths.
"""

from __future__ import annotations

import re

from docutils import nodes

#: a table with more body rows is set as a longtable in the PDF
LONG_ROWS = 6


def _unbox(admonition: nodes.Element) -> list[nodes.Node]:
    title = next((c for c in admonition.children if isinstance(c, nodes.title)), None)
    rest = [c for c in admonition.children if c is not title]
    head = [nodes.rubric("", "", *title.children)] if title is not None else []
    return head + rest


def tables_for_latex(app, doctree, docname) -> None:
    if app.builder.format != "latex":
        return
    for admonition in list(doctree.findall(nodes.Admonition)):
        if any(True for _ in admonition.findall(nodes.table)):
            admonition.replace_self(_unbox(admonition))
    for table in doctree.findall(nodes.table):
        _widths_from_content(table)
        rows = sum(len(body.children) for body in table.findall(nodes.tbody))
        if rows > LONG_ROWS and "longtable" not in table["classes"]:
            table["classes"].append("longtable")


def _widths_from_content(table: nodes.table) -> None:
    """Give the table's columns widths in proportion to what they hold: at least their longest word
    (a number never breaks) plus a margin for the column's padding, and their longest body cell up
    to 30 characters, so that each column wraps within the page instead of running off it or into
    its neighbour."""
    for group in table.findall(nodes.tgroup):
        specs = [c for c in group.children if isinstance(c, nodes.colspec)]
        word, cell = [1] * len(specs), [1] * len(specs)
        for row in group.findall(nodes.row):
            in_body = isinstance(row.parent, nodes.tbody)
            for i, entry in enumerate(c for c in row.children if isinstance(c, nodes.entry)):
                if i < len(specs):
                    text = entry.astext()
                    # split at breakable spaces only: "20 000" (a no-break space) is one word
                    word[i] = max(word[i], *(len(w) for w in re.split(r"[ \t\n]+", text)))
                    if in_body:
                        cell[i] = max(cell[i], min(30, len(text)))
        for spec, w, c in zip(specs, word, cell):
            spec["colwidth"] = max(w + 4, c)
    table["classes"] = [c for c in table["classes"] if c != "colwidths-auto"] + ["colwidths-given"]


def setup(app):
    app.connect("doctree-resolved", tables_for_latex)
    return {"parallel_read_safe": True}
