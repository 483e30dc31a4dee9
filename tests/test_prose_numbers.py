"""No result typed by hand in a page's prose: every decimal, percentage or factor ("3×") in the
prose of a page (outside code, math, inline code and glued values) is one of the paper's or the
protocol's constants listed here for that page, so a measured number can only reach the prose
through a glue that the build computes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGES = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.md"))

#: section numbers, which every page may name
SECTIONS = {"3.1", "3.2", "3.3", "4.1", "4.2"}
#: per page, the constants its prose states: the paper's settings (rates, noise, thresholds) and
#: the protocol's choices, each a definition, never a result
CONSTANTS = {
    "02": {"0.005", "0.02"},
    "03": {"0.1", "0.71", "0.01", "0.016", "0.0016", "0.0256", "0.004", "0.925", "99.9", "99.9 %", "90 %", "99 %", "2×", "10×"},
    "04": {"100×", "0.1", "0.71"},
    "05": {"2×"},
    "08": {"90%"},
    "10": {"0.1", "5 %"},
}
NUMBER = re.compile(r"(?<![\w.])(\d+\.\d+(?:\s?%|×)?|\d+(?:\s\d{3})*\s?%|\d[\d\s]*×)")


def prose(text: str) -> str:
    """A MyST page's prose: without its front matter, code cells and directives, math, inline
    code, glued values and link targets."""
    if text.startswith("---"):
        text = text[text.index("---", 3) + 3:]
    kept, fence = [], None
    for line in text.splitlines():
        if fence is None and line.startswith(("```", ":::")):
            fence = line[:3]
            continue
        if fence is not None:
            if line.startswith(fence) and line.strip() == fence:
                fence = None
            continue
        kept.append(line)
    out = "\n".join(kept)
    for pattern in (r"\$\$.*?\$\$", r"\$[^$]*\$", r"\{glue:[a-z]+\}`[^`]*`", r"`[^`]*`", r"\]\([^)]*\)"):
        out = re.sub(pattern, "", out, flags=re.S)
    return out


def test_prose_strips_what_the_build_computes():
    text = "---\nkernel: x\n---\nA 2.5× gain {glue:text}`g` and $0.3$ `1.5`.\n```{code-cell}\nx = 0.7\n```\nDone 4 %."
    assert NUMBER.findall(prose(text)) == ["2.5×", "4 %"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_number_in_the_prose_is_a_stated_constant(page):
    allowed = SECTIONS | CONSTANTS.get(page.name[:2], set())
    typed = sorted({m.strip() for m in NUMBER.findall(prose(page.read_text(encoding="utf-8")))} - allowed)
    assert not typed, f"{page.name}: numbers typed in the prose (glue them from the build, or list a constant here): {typed}"
