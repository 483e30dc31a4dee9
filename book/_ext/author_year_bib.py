"""An author-year bibliography to match the book's author-year citations.

sphinxcontrib-bibtex cites "Author et al. (2024)" (``bibtex_reference_style: author_year``) but
labels the list with pybtex's formatting style, whose built-in labels are numbers or alpha codes.
This extension registers the pybtex style ``author_year``: entries sorted by author, year and
title, each labelled "Author, year", "Author and Other, year" or "Author et al., year" (a letter
added when two labels would be equal). Select it with ``bibtex_default_style: author_year``.
"""

from __future__ import annotations

from collections import Counter

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle


def _surname(person) -> str:
    return " ".join(person.prelast_names + person.last_names).replace("{", "").replace("}", "")


def author_year_label(entry) -> str:
    """"Surname, year", "Surname and Surname, year" or "Surname et al., year"."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_surname(p) for p in people if str(p) != "others"]
    if not names:
        who = entry.fields.get("key", entry.key)
    elif len(names) == 1 and len(people) == 1:
        who = names[0]
    elif len(names) == 2 and len(people) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearLabelStyle(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        labels = [author_year_label(entry) for entry in sorted_entries]
        count, seen = Counter(labels), Counter()
        for label in labels:
            if count[label] == 1:
                yield label
            else:
                yield label + chr(ord("a") + seen[label])
                seen[label] += 1


class AuthorYearStyle(UnsrtStyle):
    default_label_style = "author_year"
    default_sorting_style = "author_year_title"


register_plugin("pybtex.style.labels", "author_year", AuthorYearLabelStyle)
register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle)


def setup(app):
    return {"parallel_read_safe": True, "parallel_write_safe": True}
