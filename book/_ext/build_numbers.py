"""The times the intro promises, taken from the build instead of typed.

The reproduce page, executed by ``make execute`` after every other page, writes
``book/executed/build_numbers.json``: the profile of this build, its pages' execution time and the
cost model's longest page on a T4 at the ``gpu`` profile. This extension turns each entry into a
MyST substitution (``{{ build_minutes }}`` in ``book/intro.md``), so the intro says what the same
build measured or estimated. Without the file (a page built outside ``make book``) each reads
"not measured".
"""

from __future__ import annotations

import json
from pathlib import Path

NUMBERS = "book/executed/build_numbers.json"
#: what the intro shows for each substitution when the build wrote no numbers
MISSING = {"build_profile": "(none)", "build_minutes": "(not measured)", "gpu_longest_minutes": "(not estimated)",
           "gpu_longest_page": "(none)"}


def add_substitutions(app, config) -> None:
    path = Path(app.confdir) / NUMBERS
    numbers = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    config.myst_substitutions = {**MISSING, **(config.myst_substitutions or {}),
                                 **{k: str(v) for k, v in numbers.items()}}


def setup(app):
    # before myst-parser reads its settings (builder-inited)
    app.connect("config-inited", add_substitutions)
    return {"parallel_read_safe": True}
