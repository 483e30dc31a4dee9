"""The README and the CHANGELOG name what exists: every module and file they name, every profile."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from monosem.profiles import PROFILE_NAMES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "CHANGELOG.md")


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or an attribute of one (``monosem.profiles.get_profile``)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


@pytest.mark.parametrize("doc", DOCS)
def test_every_module_named_exists(doc):
    names = set(re.findall(r"`(monosem(?:\.\w+)+)", (ROOT / doc).read_text(encoding="utf-8")))
    assert names, f"{doc} names no module"
    assert [n for n in sorted(names) if not _resolves(n)] == []


@pytest.mark.parametrize("doc", DOCS)
def test_every_file_named_exists(doc):
    paths = set(re.findall(r"`((?:monosem|scripts|tests|\.ci|\.github)/[\w./-]*)`", (ROOT / doc).read_text(encoding="utf-8")))
    assert [p for p in sorted(paths) if not (ROOT / p).exists()] == []


def test_the_profile_table_lists_every_profile():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| profile |"):].split("\n\n")[0]
    assert re.findall(r"^\| `(\w+)`", table, flags=re.M) == list(PROFILE_NAMES)
