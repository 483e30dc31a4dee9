"""Tables that fit the PDF's pages.

LaTeX cannot break a ``tabulary`` (Sphinx's table for a short table) across pages, nor a framed
admonition around one; a verdict box of 18 claims is taller than a page, and XeLaTeX then loops
until its input stack is exhausted. For the LaTeX builder only, this extension turns each
admonition that holds a table into its title (a rubric) followed by its contents, and has Sphinx
set every table of more than :data:`LONG_ROWS` rows as a ``longtable``, which breaks across pages.
Columns get widths in proportion to their longest cell, so that they wrap instead of running off
the page (Sphinx sets a long table's columns of automatic width unbroken), and a table whose
numbers cannot all fit the text width at the body's size is set in the largest smaller size at
which they do (a table of 19 columns, such as page 04's ladder, in ``\\scriptsize``). The HTML keeps
its boxes, widths and sizes.
"""

from __future__ import annotations

import re

from docutils import nodes

#: a table with more body rows is set as a longtable in the PDF
LONG_ROWS = 6
#: how many characters of the body's type a line of the PDF's text width holds (Sphinx's
#: letter-size manual class at 10 pt), and the smaller sizes with how many more each holds
LINE_CHARS = 90
SMALLER = (("\\small", 1.1), ("\\footnotesize", 1.25), ("\\scriptsize", 1.45), ("\\tiny", 1.9))
#: a wide table's column padding (each side, points; LaTeX's default is 6) and the width of a
#: character of the body's type (points), to count the padding in characters
PAD_PT, CHAR_PT = 2, 5


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
    for table in list(doctree.findall(nodes.table)):
        size = _widths_from_content(table)
        rows = sum(len(body.children) for body in table.findall(nodes.tbody))
        if rows > LONG_ROWS and "longtable" not in table["classes"]:
            table["classes"].append("longtable")
        if size:
            # a smaller type and narrower column padding for this table alone
            parent, i = table.parent, table.parent.index(table)
            parent.insert(i, nodes.raw("", f"\\begingroup{size}\\setlength{{\\tabcolsep}}{{{PAD_PT}pt}}\n", format="latex"))
            parent.insert(i + 2, nodes.raw("", "\\endgroup\n", format="latex"))


def _words(text: str) -> list[str]:
    # split at breakable spaces only: "20 000" (a no-break or thin space) is one word
    return [w for w in re.split(r"[ \t\n]+", text) if w]


def _widths_from_content(table: nodes.table) -> str | None:
    """Give the table's columns widths in proportion to what they hold: at least their longest word
    (a number never breaks) plus a margin for the column's padding, and their longest body cell up
    to 30 characters, so that each column wraps within the page instead of running off it or into
    its neighbour. A table too wide for that at the body's size gets the narrowest columns that
    keep its body's words whole (headers hyphenate) and the largest smaller type at which they fit
    side by side, which this returns (``None``: the body's size fits)."""
    size = None
    for group in table.findall(nodes.tgroup):
        specs = [c for c in group.children if isinstance(c, nodes.colspec)]
        word, cell, body = [1] * len(specs), [1] * len(specs), [1] * len(specs)
        for row in group.findall(nodes.row):
            in_body = isinstance(row.parent, nodes.tbody)
            for i, entry in enumerate(c for c in row.children if isinstance(c, nodes.entry)):
                if i < len(specs):
                    text = entry.astext()
                    word[i] = max(word[i], *(len(w) for w in _words(text) or [""]))
                    if in_body:
                        cell[i] = max(cell[i], min(30, len(text)))
                        body[i] = max(body[i], *(len(w) for w in _words(text) or [""]))
        widths = [max(w + 4, c) for w, c in zip(word, cell)]
        if sum(widths) > LINE_CHARS:
            # a header word up to 6 characters stays whole; longer ones hyphenate
            widths = [max(b, min(w, 6)) + 1 for b, w in zip(body, word)]
            pad = len(widths) * 2 * PAD_PT / CHAR_PT
            size = next((cmd for cmd, gain in SMALLER if sum(widths) / gain + pad <= LINE_CHARS), SMALLER[-1][0])
        for spec, w in zip(specs, widths):
            spec["colwidth"] = w
    table["classes"] = [c for c in table["classes"] if c != "colwidths-auto"] + ["colwidths-given"]
    return size


def setup(app):
    app.connect("doctree-resolved", tables_for_latex)
    return {"parallel_read_safe": True}
