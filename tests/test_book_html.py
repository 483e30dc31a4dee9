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


def _status_word(verdict: str) -> str:
    """A verdict as printed, without the runs an indicated claim names ("indicated (1 run)")."""
    return re.sub(r" \((\d+) (runs?|seeds?)\)$", "", verdict)


def _verdict_rows(html: str, box: bool) -> list[tuple[str, ...]]:
    """The (claim, scale, verdict, numbers) rows of a page's verdict box, or of the status page
    (one folded block per claim: the claim in its summary, a row per scale in its table)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    rows = []
    if box:
        # every scale's row is folded under the box (the box itself shows one row per claim)
        for table in filter(None, [d.find("table") for d in soup.select("details")
                                   if "Every scale and every run" in (d.find("summary") or d).get_text()]):
            for tr in table.select("tbody tr"):
                cells = [td.get_text(" ", strip=True) for td in tr.find_all("td")]
                claim, scale, verdict, numbers = cells[-4:]
                rows.append((claim, scale, _status_word(verdict), numbers))
        return rows
    for summary in soup.select("main summary"):
        claim = summary.select_one(".monosem-claim-text")
        table = summary.find_next("table")
        if claim is None or table is None:
            continue
        for tr in table.select("tbody tr"):
            cells = [td.get_text(" ", strip=True) for td in tr.find_all("td")]
            scale, verdict, numbers = cells[-3:]
            # a row names an indicated claim's runs ("indicated (1 run)"); the status word is what must agree
            rows.append((claim.get_text(" ", strip=True), scale, _status_word(verdict), numbers))
    return rows


def _normal(row: tuple[str, ...]) -> tuple[str, ...]:
    """A row's text with its whitespace and MathJax delimiters made alike (the status page writes
    its claims as raw HTML, the verdict boxes as MyST)."""
    quotes = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})  # MyST's smart quotes, not in raw HTML
    return tuple(re.sub(r"\\[()]", "", re.sub(r"\s+", " ", cell)).strip().translate(quotes) for cell in row)


def test_the_status_page_agrees_with_every_verdict_box():
    status = HTML / "book" / "executed" / "status.html"
    assert status.exists(), "the status page was not built"
    in_status = [_normal(r) for r in _verdict_rows(status.read_text(encoding="utf-8"), box=False)]
    in_boxes = [_normal(row) for page in sorted((HTML / "book" / "executed").glob("[0-9][0-9]_*.html"))
                for row in _verdict_rows(page.read_text(encoding="utf-8"), box=True)]
    assert in_boxes, "no page shows a verdict box"
    assert sorted(in_status) == sorted(in_boxes)


def _box_rows(html: str) -> list[tuple[str, ...]]:
    """The (claim, verdict, best evidence, key number) rows of a page's verdict box itself."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    return [tuple(td.get_text(" ", strip=True) for td in tr.find_all("td"))
            for table in filter(None, [a.find("table") for a in soup.select("div.admonition") if "Does it reproduce?" in a.get_text()])
            for tr in table.select("tbody tr")]


def test_every_verdict_box_shows_one_short_row_per_claim_from_its_folded_rows():
    from monosem.book import BOX_ROWS, KEY_CHARS

    for page in sorted((HTML / "book" / "executed").glob("[0-9][0-9]_*.html")):
        html = page.read_text(encoding="utf-8")
        box = [_normal(r) for r in _box_rows(html)]
        if not box:
            continue
        every = [_normal(r) for r in _verdict_rows(html, box=True)]
        assert len(box) <= BOX_ROWS, f"{page.name}: {len(box)} rows in its verdict box"
        assert len({r[0] for r in box}) == len(box), f"{page.name}: a claim has two rows in its box"
        for claim, verdict, scale, key in box:
            assert len(key) <= KEY_CHARS, f"{page.name}: {key!r}"
            # the box's verdict is that of one folded row of the same claim, at the scale it names
            assert any(c == claim and s == scale and verdict.startswith(v.split(" (")[0]) for c, s, v, _ in every), (page.name, claim, scale)


def test_the_status_page_opens_on_a_tally_and_links_its_csv_files():
    from bs4 import BeautifulSoup

    from monosem.experiments.verdicts import STATUSES

    soup = BeautifulSoup((HTML / "book" / "executed" / "status.html").read_text(encoding="utf-8"), "html.parser")
    tally = soup.select("main table")[0]
    header = [th.get_text(" ", strip=True) for th in tally.select("thead th")]
    assert header == ["section", *STATUSES], header
    assert tally.select("tbody tr")[-1].find("td").get_text(strip=True) == "all"
    links = {a["href"].rsplit("/", 1)[-1]: a["href"] for a in soup.select("main a[href$='.csv']")}
    for name in ("monosem-claims.csv", "monosem-recorded-cells.csv"):
        assert name in links, f"the status page does not link {name}"
        target = (HTML / "book" / "executed" / links[name]).resolve()
        assert target.exists() and target.stat().st_size > 0, f"{links[name]} was not built"


def _table_cells(page: Path) -> list[str]:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    return [cell.get_text(" ", strip=True) for table in soup.select("main table") for cell in table.select("td, th")]


def test_no_table_prints_scientific_counts_or_missing_values_as_nan():
    """Counts are integers (10 000, not 1e+04) and a missing value is a dash, not NaN or <NA>."""
    bad = []
    for page in _pages():
        for cell in _table_cells(page):
            if re.search(r"\de\+0\d", cell) or re.search(r"(^|\W)(NaN|nan|<NA>|NaT)(\W|$)", cell):
                bad.append(f"{page.name}: {cell!r}")
    assert not bad, "tables print scientific notation or NaN:\n" + "\n".join(bad[:20])


def test_no_page_shows_the_install_cells_source():
    header = (ROOT / "scripts" / "notebook_header.py").read_text(encoding="utf-8")
    marker = "Without monosem (e.g. on Google Colab)"
    assert marker in header, "the install cell's first comment changed: update this test"
    shown = [p.name for p in _pages() if marker in p.read_text(encoding="utf-8")]
    assert not shown, f"pages show the install cell: {shown}"


def test_no_page_shows_the_cell_papermill_injects():
    """The injected parameters (the build's profile) are hidden like the parameters cell."""
    shown = [p.name for p in _pages() if "tag_injected-parameters" in p.read_text(encoding="utf-8")]
    assert not shown, f"pages show papermill's injected parameters: {shown}"
