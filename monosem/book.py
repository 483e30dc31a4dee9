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
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from . import tables
from .atomic import atomic_write_json
from .experiments.verdicts import Claim, rule_text, verdict_label

__all__ = ["glue", "table_style", "BOX_ROWS", "KEY_CHARS", "best_evidence", "key_number", "box_rows", "verdict_box", "readings_dropdown", "findings_box", "publish_claims", "load_claims",
           "reading_tally", "headline", "TITLE_MARK"]


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


#: the most rows a verdict box shows: one per claim of the paper (every scale stays folded under it)
BOX_ROWS = 8
#: the longest "key number" cell of a box row, in characters
KEY_CHARS = 200


def _size(value: Any) -> int:
    return int(value) if isinstance(value, numbers.Integral) else 0


def _number(value: float) -> str:
    """A statistic as a box prints it: three significant digits, a large one in full with thin
    spaces (never in scientific notation)."""
    return tables.thousands(int(round(value))) if abs(value) >= 1000 else f"{value:.3g}"


def best_evidence(rows: Iterable[Claim]) -> Claim:
    """Of one claim's rows (one per scale), its best evidence: a judged row before a not-computed
    one, then the most runs, then the largest network (width × batch), then the largest n."""
    return max(rows, key=lambda c: (c.verdict != "not computed", c.runs, _size(c.width) * _size(c.batch), _size(c.n)))


def key_number(claim: Claim) -> str:
    """A claim's one key number: the part its verdict rests on (the first whose own verdict is the
    claim's, else the first), on the means and how many runs hold, at most :data:`KEY_CHARS`
    characters; the evidence itself where no part was computed."""
    parts = [p for p in claim.parts if p.mean is not None]
    if not parts:
        return claim.evidence[:KEY_CHARS]
    p = next((q for q in parts if q.status == claim.verdict), parts[0])
    held = sum(p.holds(v) for v in p.values)
    text = f"{p.label}: {_number(p.mean)} on the means" + (f", holds in {held} of {len(p.values)}" if p.values and not p.exact else "")
    return text[:KEY_CHARS]


def _live(claim: Claim) -> bool:
    """Whether a row was computed by this build (not a recorded run, not a symbolic check)."""
    return "recorded" not in claim.profile and claim.profile != "symbolic"


def box_rows(claims: Iterable[Claim]) -> list[tuple[Claim, str]]:
    """One row per claim of the paper, in the page's order: its best evidence
    (:func:`best_evidence`) and the verdict cell's note: the other readings' agreement and, where
    this build's own profile judged it otherwise, that verdict ("(cpu: ...)")."""
    groups: dict[str, list[Claim]] = {}
    for c in claims:
        groups.setdefault(c.claim, []).append(c)
    out = []
    for rows in groups.values():
        best = best_evidence(rows)
        note = f" {best.readings_note}" if best.readings else ""
        live = [c for c in rows if _live(c) and c is not best and c.verdict != "not computed"]
        if live and live[-1].verdict != best.verdict:
            note += f" ({live[-1].profile}: {live[-1].label})"
        out.append((best, note))
    return out


def verdict_box(claims: Iterable[Claim]):
    """The page's verdict box (a MyST admonition holding a table), for ``{glue:md}`` at the top of
    the page: one row per claim (:func:`box_rows`), at most :data:`BOX_ROWS`, with its verdict,
    the scale of its best evidence and one key number; claims no record can judge are named under
    it; every scale's row and every reading folded below it."""
    from IPython.display import Markdown  # a notebook's display; not needed by the rest of the package

    claims = list(claims)
    judged = [(c, note) for c, note in box_rows(claims) if c.verdict != "not computed"]
    unjudged = [c for c, _ in box_rows(claims) if c.verdict == "not computed"]
    if len(judged) > BOX_ROWS:
        raise ValueError(f"a verdict box holds at most {BOX_ROWS} claims; this page judges {len(judged)}")
    rows = ["| the paper's claim | verdict | best evidence | key number |", "|---|---|---|---|"]
    for c, note in judged:
        # an indicated claim is set apart: it names its runs and is not in bold like a settled one
        shown = f"*{c.label}*" if c.verdict == "indicated" else f"**{c.label}**"
        rows.append(f"| {c.claim} | {shown}{note} | {c.scale} | {key_number(c)} |")
    below = [f"Not judged: {c.claim}: {c.evidence}" for c in unjudged]
    every = ["| the paper's claim | scale | verdict | the numbers |", "|---|---|---|---|"]
    every += [f"| {c.claim} | {c.scale} | {c.label}{' ' + c.readings_note if c.readings else ''} | {c.evidence} |" for c in claims]
    return Markdown("\n".join([":::{admonition} Does it reproduce?", ":class: tip", "", *rows, "", *below, *([""] if below else []),
                               rule_text(), ":::", "", ":::{dropdown} Every scale and every run behind these verdicts", "", *every,
                               ":::", *readings_dropdown([c for c, _ in judged])]))


def readings_dropdown(claims: Iterable[Claim]) -> list[str]:
    """The readings of every claim that has several, as the lines of a folded MyST dropdown (none
    when no claim has): per claim and scale, each reading (the primary first), its verdict and its
    statistic on the means and per run."""
    rows = []
    for c in claims:
        for r, primary in ((None, True), *((r, False) for r in c.readings)) if c.readings else ():
            name, parts = (c.reading, c.parts) if primary else (r.name, r.parts)
            verdict = c.label if primary else verdict_label(r.verdict, r.runs, c.unit)
            stat = "; ".join(f"{_number(p.mean)} ({', '.join(_number(v) if abs(v) >= 1000 else f'{v:.2f}' for v in p.values)})"
                             for p in parts if p.mean is not None)
            rows.append(f"| {c.claim if primary else ''} | {c.scale if primary else ''} | {name}{' (primary)' if primary else ''} "
                        f"| {verdict} | {stat} |")
    if not rows:
        return []
    return ["", ":::{dropdown} Every reading of the paper's words, judged by the same rule", "",
            "| the paper's claim | scale | reading | verdict | on the means (per run) |", "|---|---|---|---|---|", *rows, ":::"]


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
        atomic_write_json(Path(folder) / f"{page}.json", [c.to_json() for c in claims])
    return claims


def load_claims(folder: str | os.PathLike) -> pd.DataFrame:
    """Every page's claims written by :func:`publish_claims` into ``folder``, one row each: the
    fields of :class:`~.experiments.verdicts.Claim`, its scale in words (``scale``) and its verdict
    as printed (``label``, e.g. "indicated (1 run)")."""
    rows = []
    for path in sorted(Path(folder).glob("*.json")) if Path(folder).is_dir() else ():
        rows += json.loads(path.read_text(encoding="utf-8"))
    return pd.DataFrame(rows, columns=[f.name for f in fields(Claim)] + ["scale", "label"])


def _section(page: str) -> str:
    """A page's section as the status page names it: its number, e.g. "01"."""
    return page[:2]


def status_tally(claims: pd.DataFrame) -> pd.DataFrame:
    """How many rows of ``claims`` (:func:`load_claims`) have each status, by section: one row per
    page that judged a claim and a last row "all", one column per status of
    :data:`~monosem.experiments.verdicts.STATUSES` in its order (a status seen in no page counts 0)."""
    from .experiments import verdicts  # read at call time: the statuses are the verdict rules' to define

    statuses = list(verdicts.STATUSES)
    sections = list(dict.fromkeys(claims["page"]))
    tally = pd.crosstab(claims["page"], claims["verdict"]).reindex(index=sections, columns=statuses, fill_value=0)
    tally.loc["all"] = tally.sum()
    tally.index = [_section(p) if p != "all" else p for p in tally.index]
    return tally.rename_axis(index="section", columns=None).astype(int)


def _rows(claims: pd.DataFrame) -> list[Claim]:
    return [Claim.from_json({k: v for k, v in row.items() if not (isinstance(v, float) and pd.isna(v))})
            for row in claims.to_dict("records")]


#: the words that mark the title claim's row (finding 1b)
TITLE_MARK = "the title claim"


def headline(claims: pd.DataFrame) -> str:
    """The book's answer in two sentences, from every page's claims (:func:`load_claims`): how many
    of the paper's claims reproduce, are indicated, are not settled or do not reproduce at their
    best evidence (:func:`best_evidence`), and the title claim's verdict with its scale and
    reading."""
    from .experiments import verdicts  # read at call time: the statuses are the verdict rules' to define

    groups: dict[tuple[str, str], list[Claim]] = {}
    for c in _rows(claims):
        groups.setdefault((c.page, c.claim), []).append(c)
    best = [best_evidence(rows) for rows in groups.values()]
    tally = {s: sum(c.verdict == s for c in best) for s in verdicts.STATUSES}
    words = ", ".join(f"{n} {s}" for s, n in tally.items() if n and s != "not computed")
    text = f"**At their best evidence, of the paper's {sum(n for s, n in tally.items() if s != 'not computed')} judged claims: {words}.**"
    title = [c for c in best if TITLE_MARK in c.claim]
    if title:
        c = title[0]
        reading = f", read as {c.reading}" if c.reading else ""
        text += (f" The title claim, that MLPs come close to the per-cluster oracles (finding 1b), **{c.label}** at its best "
                 f"evidence ({c.scale}){reading}" + (f"; {c.readings_note[1:-1]}" if c.readings else "") + ".")
    return text


def reading_tally(claims: pd.DataFrame) -> str:
    """How many claim rows of ``claims`` (:func:`load_claims`) are judged under several readings
    of the paper's words, and how many of those change verdict with the reading, in a sentence."""
    several = [(row.verdict, row.readings) for row in claims.itertuples() if isinstance(row.readings, list) and row.readings]
    changed = sum(any(r.get("verdict") != verdict for r in readings) for verdict, readings in several)
    return (f"{changed} of the {len(several)} claim rows judged under several readings of the paper's words change verdict "
            "with the reading (each row's box line names its primary reading and the others agreeing).")


def _readings_note(row: dict) -> str:
    """A status row's note on its other readings (:attr:`Claim.readings_note`), "" without."""
    if not (isinstance(row.get("readings"), list) and row["readings"]):
        return ""
    return " " + Claim.from_json({k: v for k, v in row.items() if k != "Index"}).readings_note


def _math_for_html(text: str) -> str:
    """``$x$`` inline math as MathJax reads it in raw HTML (``\\(x\\)``), the rest escaped."""
    import html

    parts = str(text).split("$")
    return "".join(html.escape(p) if i % 2 == 0 else f"\\({html.escape(p)}\\)" for i, p in enumerate(parts))


def status_markdown(claims: pd.DataFrame, titles: dict[str, str] | None = None) -> str:
    """The status page's rows (MyST): one block per section, one line per claim with its verdict at
    every scale, and the numbers behind each verdict folded under it (``<details>``; the PDF shows
    them open). ``titles`` maps a page to its title."""
    out = []
    for page, rows in claims.groupby("page", sort=False):
        title = (titles or {}).get(page, page)
        out += [f"**[{_section(page)}]({page}.ipynb) {title}**", ""]
        for claim, by_scale in rows.groupby("claim", sort=False):
            records = by_scale.to_dict("records")
            best = max(records, key=lambda r: (r["verdict"] != "not computed", _size(r.get("runs")),
                                               _size(r.get("width")) * _size(r.get("batch")), _size(r.get("n"))))
            others = [f"{r['label']} ({r['scale']})" for r in records if r is not best]
            verdicts = " · ".join([f"best evidence: {best['label']} ({best['scale']})", *others])
            out += ['<details class="monosem-claim">',
                    f'<summary><span class="monosem-claim-text">{_math_for_html(claim)}</span>'
                    f'<span class="monosem-claim-verdicts">{_math_for_html(verdicts)}</span></summary>', "",
                    # the PDF drops the raw HTML above: there the claim heads its table
                    "```{only} latex", f"*{claim}*", "```", "",
                    "| scale | verdict | the numbers |", "|---|---|---|"]
            out += [f"| {v.scale} | {v.label}{_readings_note(v._asdict())} | {v.evidence} |" for v in by_scale.itertuples()]
            out += ["", "</details>", ""]
    return "\n".join(out)


def recorded_cells_frame() -> pd.DataFrame:
    """Every result shipped in ``monosem/recorded/cells_*/``, one row per cell: its profile,
    method, key, configuration, scalar metrics and wall time (the curves are left out)."""
    from importlib import resources

    base = Path(str(resources.files("monosem") / "recorded"))
    rows = []
    for path in sorted(base.glob("cells_*/*/*.json")):
        rec = json.loads(path.read_text(encoding="utf-8"))
        row = {"profile": rec.get("profile", path.parent.parent.name.removeprefix("cells_")),
               "method": path.parent.name, "key": rec.get("key", path.stem)}
        config = rec.get("config", {})
        row |= {k: v for k, v in config.get("data", {}).items() if not isinstance(v, (dict, list))}
        row |= {f"spec.{k}": v for k, v in (config.get("spec") or {}).items() if not isinstance(v, (dict, list))}
        row |= {k: v for k, v in rec.get("metrics", {}).items() if not isinstance(v, (dict, list))}
        row |= {f"timing.{k}": v for k, v in rec.get("timing", {}).items() if not isinstance(v, (dict, list))}
        rows.append(row)
    return pd.DataFrame(rows)
