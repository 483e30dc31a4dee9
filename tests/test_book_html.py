"""Checks of the built book (run by .ci/run after `make book`; skipped when no build exists).

Set BOOK_HTML to the HTML output folder (default: _build/html).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html"))

pytestmark = pytest.mark.skipif(not (HTML / "index.html").exists(), reason=f"no built book at {HTML}")


def _pages():
    return sorted(p for p in HTML.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)


def _colab_links(text: str) -> list[str]:
    return re.findall(r'href="(https://colab\.research\.google\.com/[^"]+)"', text)


def test_every_notebook_page_has_a_colab_launch_button_to_an_existing_notebook():
    executed = sorted(p for p in (ROOT / "book" / "executed").glob("*.ipynb") if (ROOT / "notebooks" / p.name).exists())
    assert executed, "no executed notebooks: run `make execute` first"
    for nb in executed:
        page = HTML / "book" / "executed" / f"{nb.stem}.html"
        assert page.exists(), f"{page} was not built"
        links = _colab_links(page.read_text(encoding="utf-8"))
        assert links, f"{page.name} has no Colab link"


def test_every_colab_link_opens_a_notebook_in_the_repository():
    seen = 0
    for page in _pages():
        for url in _colab_links(page.read_text(encoding="utf-8")):
            path = urlparse(url).path
            if "/assets/" in path:  # the badge image
                continue
            m = re.match(r"^/github/[^/]+/[^/]+/blob/[^/]+/(.+)$", path)
            assert m, f"unexpected Colab URL {url} on {page.name}"
            target = ROOT / m.group(1)
            assert target.suffix == ".ipynb", f"{url} on {page.name} does not open a notebook"
            assert target.exists(), f"{url} on {page.name} opens {m.group(1)}, which is not in the repository"
            seen += 1
    assert seen > 0


def test_mathjax_is_served_locally():
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        for src in re.findall(r'<script[^>]+src="([^"]*mathjax[^"]*)"', text, flags=re.I):
            assert not src.startswith(("http:", "https:", "//")), f"{page.name}: MathJax comes from the network: {src}"
            assert (page.parent / src.split("?")[0]).resolve().exists(), f"{page.name}: MathJax file {src} missing"
    intro = (HTML / "book" / "intro.html").read_text(encoding="utf-8")
    assert re.search(r'<script[^>]+src="[^"]*mathjax/tex-chtml\.js(\?[^"]*)?"', intro), "no local MathJax on the intro page"


def test_bibliography_and_proof_environments_render():
    intro = (HTML / "book" / "intro.html").read_text(encoding="utf-8")
    assert 'class="proof lemma' in intro and 'class="proof theorem' in intro
    assert 'href="bibliography.html#id' in intro or "bibliography.html#" in intro, "the intro's citation does not link"
    bib = (HTML / "book" / "bibliography.html").read_text(encoding="utf-8")
    # every entry of references.bib is listed (the bibliography page cites them all)
    entries = len(re.findall(r"^@\w+\{", (ROOT / "book" / "references.bib").read_text(encoding="utf-8"), flags=re.M))
    assert bib.count('role="doc-biblioentry"') == entries


def _verdict_rows(html: str, box: bool) -> list[tuple[str, ...]]:
    """The (claim, scale, verdict, numbers) rows of a page's verdict box, or of the status table."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    if box:
        tables = [a.find("table") for a in soup.select("div.admonition") if "Does it reproduce?" in a.get_text()]
    else:
        tables = soup.select("main table")[:1]
    rows = []
    for table in filter(None, tables):
        for tr in table.select("tbody tr"):
            cells = [td.get_text(" ", strip=True) for td in tr.find_all("td")]
            claim, scale, verdict, numbers = cells[-4:]
            # a box names an indicated claim's runs ("indicated (1 run)"); the status word is what must agree
            rows.append((claim, scale, re.sub(r" \(\d+ (runs?|seeds?)\)$", "", verdict), numbers))
    return rows


def test_the_status_page_agrees_with_every_verdict_box():
    status = HTML / "book" / "executed" / "status.html"
    assert status.exists(), "the status page was not built"
    in_status = _verdict_rows(status.read_text(encoding="utf-8"), box=False)
    in_boxes = [row for page in sorted((HTML / "book" / "executed").glob("[0-9][0-9]_*.html"))
                for row in _verdict_rows(page.read_text(encoding="utf-8"), box=True)]
    assert in_boxes, "no page shows a verdict box"
    assert sorted(in_status) == sorted(in_boxes)
