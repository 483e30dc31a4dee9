"""Finding 1b under each reading of A.2's initialization in the page's words: each rung's
readings in a sentence, the best reading against the default's same network on the same runs
(at the question's K, on the widest rung and at the control K), whether 1b fails under every
reading tried, and findings 1a and 2 under each reading; from :mod:`.init_analysis`' tables and
the cells of :mod:`.init_readings`.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from ...profiles import Profile
from ...tables import count, span, thousands
from ..cache import Job
from ..verdicts import MIN_RUNS, Claim, Comparison, verdict_label
from .init_analysis import RUNGS, reading_records, reading_verdict, run0_ratios
from .init_readings import (BEST_NETWORK, BEST_READING, DEFAULT_READING, LIKELY_READING, PAPER_READINGS, READINGS, SCREEN_RELU,
                            InitSizes, init_sizes, reading_of, same_as_default)
from .ladder import gap_frame, gap_robust, gap_robust_words
from .sample_efficiency import CLAIMS, ORACLE_FACTOR

__all__ = ["init_numbers", "best_numbers", "kept_words"]


def _best_row(frame: pd.DataFrame, rung: str, reading: str) -> pd.Series | None:
    rows = frame[(frame["rung"] == rung) & (frame["reading"] == reading)] if not frame.empty else frame
    return None if rows.empty else rows.loc[rows["MLP / oracle"].idxmin()]


def _reading_words(frame: pd.DataFrame, rung: str) -> str:
    """The readings' best networks on ``rung`` in one line: how many readings, the closest to the
    oracle and the furthest (ratio, network, runs), and how many come within the threshold; a
    single reading's ratio, runs and verdict."""
    rows = [row for name in READINGS if (row := _best_row(frame, rung, name)) is not None]
    if not rows:
        return "none recorded yet"

    def one(row) -> str:
        return f"{row['reading']} {row['MLP / oracle']:.2f}× ({row['network']}, {count(row['runs'], 'run')})"
    if len(rows) == 1:
        return f"{one(rows[0])}, {rows[0]['verdict']}"
    rows.sort(key=lambda r: r["MLP / oracle"])
    within = sum(r["MLP / oracle"] < ORACLE_FACTOR for r in rows)
    return (f"{len(rows)} readings, from {one(rows[0])} to {one(rows[-1])}; "
            f"{within} of {len(rows)} within {ORACLE_FACTOR:g}×")


def _rank_words(frame: pd.DataFrame, reading: str) -> str:
    """Where ``reading``'s best network ranks among the readings' best networks on each rung
    (1: closest to the oracle), with its ratio, runs and how it stopped."""
    parts = []
    for rung in RUNGS:
        rows = frame[frame["rung"] == rung] if not frame.empty else frame
        if rows.empty or reading not in set(rows["reading"]):
            continue
        best = rows.groupby("reading")["MLP / oracle"].min().sort_values()
        own = _best_row(frame, rung, reading)
        parts.append(f"{rung}: {list(best.index).index(reading) + 1} of {len(best)} ({own['MLP / oracle']:.2f}×, "
                     f"{count(own['runs'], 'run')}, stopped: {own['stopped']})")
    return "; ".join(parts) if parts else "not recorded yet"


def _bound_words(frame: pd.DataFrame) -> str:
    """Eq. (1)'s specialized share beside the same within the predictive coordinates, and the
    weight off them, as ranges over every network where a record holds both."""
    col = "A ≥ .71 within the predictive coordinates, % of active"
    rows = frame[frame[col].notna()] if not frame.empty and col in frame else frame.iloc[0:0]
    if rows.empty:
        return "no recorded network holds the measure within the predictive coordinates yet"
    return (f"over the {len(rows)} networks that hold both, {span(rows['A ≥ .71 % of active'], '.1f')} % of the active units on "
            f"eq. (1) against {span(rows[col], '.1f')} % within the predictive coordinates, with a median "
            f"{span(100 * rows['median share of |w| off the predictive coordinates'], '.0f')} % of |w| off them")


def _on_runs(records: Mapping[Job, Mapping[str, Any]], sizes: InitSizes, row: pd.Series, reading: str) -> Comparison | None:
    """``reading``'s network of ``row`` on ``row``'s rung and K over ``row``'s runs alone."""
    runs, K = {int(r) for r in row["run ids"].split(", ")}, int(row["K"])
    own = reading_records({j: r for j, r in records.items() if j.run in runs}, sizes, row["rung"], reading, K)
    return reading_verdict(own, f"mlp-{row['network']}", K, getattr(sizes, row["rung"]).n)


def _default_on(records: Mapping[Job, Mapping[str, Any]], sizes: InitSizes, row: pd.Series) -> Comparison | None:
    """The default reading's same network on ``row``'s rung over ``row``'s runs alone."""
    return _on_runs(records, sizes, row, DEFAULT_READING.name)


def _paired_words(records: Mapping[Job, Mapping[str, Any]], sizes: InitSizes, row: pd.Series, default: Comparison) -> str:
    """Run by run, ``row``'s reading against ``default`` (:func:`_default_on` of the same row): in
    how many runs its ratio to the oracle is the lower one, and by what factor (the default's
    ratio over its)."""
    mine = _on_runs(records, sizes, row, row["reading"])
    if mine is None:
        return ""
    theirs = dict(default.ratios)
    pairs = [(r, theirs[run]) for run, r in mine.ratios if run in theirs]
    if not pairs:
        return ""
    lower = sum(r < d for r, d in pairs)
    return f" (lower in {lower} of {count(len(pairs), 'run')}, by {span([d / r for r, d in pairs], '.2f')}×)"


def _against_default(records: Mapping[Job, Mapping[str, Any]], sizes: InitSizes, row: pd.Series) -> str:
    """``row``'s network (a row of :func:`init_frame`) against the default reading's same network
    on the same rung, K and runs, run by run (:func:`_paired_words`)."""
    default = _default_on(records, sizes, row)
    words = f"{row['reading']} {row['MLP / oracle']:.2f}× ({row['network']}, {count(row['runs'], 'run')}, {row['verdict']})"
    if default is None:
        return words
    paired = _paired_words(records, sizes, row, default)
    if default.runs == row["runs"]:
        return words + f", against {default.mean_ratio:.2f}× for the default on the same {count(default.runs, 'run')}" + paired
    # the default has fewer runs here: both on the default's runs alone
    ids = [r for r, _ in default.ratios]
    mine = _on_runs(records, sizes, pd.Series({**row, "run ids": ", ".join(map(str, ids))}), row["reading"])
    return words + (f"; on the default's {'run' if len(ids) == 1 else 'runs'} {', '.join(map(str, ids))}, "
                    f"{mine.mean_ratio:.2f}× against its {default.mean_ratio:.2f}×" + paired)


def _control_words(control: pd.DataFrame, records: Mapping[Job, Mapping[str, Any]], sizes: InitSizes) -> str:
    """The control K on the paper's network: the best reading's network against the default's on
    the runs both have (:func:`_against_default`)."""
    row = _best_row(control[control["network"] == BEST_NETWORK.removeprefix("mlp-")] if not control.empty else control,
                    "paper", BEST_READING)
    if row is None:
        return _reading_words(control, "paper")
    return _against_default(records, sizes, row)


def _wide_words(frame: pd.DataFrame, records: Mapping[Job, Mapping[str, Any]], sizes: InitSizes) -> str:
    """The widest rung at the foot's batch: :func:`_against_default` there, whether run 0 came
    within the threshold (the rule that trains the further runs there,
    :data:`~.init_readings.WIDE_RUNS`), and the default's own verdict on every run it has."""
    row = _best_row(frame[frame["network"] == BEST_NETWORK.removeprefix("mlp-")] if not frame.empty else frame, "wide", BEST_READING)
    if row is None:
        return _reading_words(frame, "wide")
    words = _against_default(records, sizes, row)
    if row["runs"] == 1:
        close = row["MLP / oracle"] < ORACLE_FACTOR
        words += (f"; run 0 {'comes' if close else 'does not come'} within {ORACLE_FACTOR:g}×, "
                  + ("so the rung trains the verdict's further runs" if close else "so the rung trains no further run under it"))
    own = _best_row(frame, "wide", DEFAULT_READING.name)
    if own is not None and own["runs"] > row["runs"]:
        words += (f"; the default on its {count(own['runs'], 'run')}: {own['MLP / oracle']:.2f}× "
                  f"({own[f'within {ORACLE_FACTOR:g}×']} within {ORACLE_FACTOR:g}×), {own['verdict']}")
    return words


def _same_words(frame: pd.DataFrame, sizes: InitSizes) -> str:
    """The readings that coincide with the default on the paper's width (:func:`same_as_default`),
    in words: the rungs they share with it, their readout rate factor there and at the foot, and
    their networks against the default's at the foot on the same run."""
    width, foot = sizes.paper.width, sizes.foot.width
    shared = [rung for rung in RUNGS if getattr(sizes, rung).width == width]

    def at_foot(reading: str, net: str) -> float | None:
        rows = frame[(frame["rung"] == "foot") & (frame["reading"] == reading) & (frame["network"] == net)] if not frame.empty else frame
        return None if rows.empty else rows["MLP / oracle"].iloc[0]
    parts = []
    for name in same_as_default(width):
        factor = READINGS[name].start(foot).readout_lr / DEFAULT_READING.start(foot).readout_lr
        pairs = [(f"{own:.2f}× ({net})", f"{base:.2f}×") for net in ("reglu", "relu")
                 if (own := at_foot(name, net)) is not None and (base := at_foot(DEFAULT_READING.name, net)) is not None]
        parts.append(f"{name} starts every network of width {thousands(width)} ({' and '.join(shared)} rungs) exactly as the "
                     f"default does: its readout rate factor is {READINGS[name].start(width).readout_lr:g} there, so the default's "
                     f"networks there are its networks; at the foot (width {thousands(foot)}) its readout moves at {factor:g}× "
                     "the default's rate"
                     + (f", and on run 0 there its networks come to {' and '.join(p[0] for p in pairs)} the oracle, against the "
                        f"default's {' and '.join(p[1] for p in pairs)}" if pairs else ""))
    return "; ".join(parts) or f"no other reading starts a network of width {thousands(width)} as the default does"


def _decides(frame: pd.DataFrame, records: Mapping[Job, Mapping[str, Any]], sizes: InitSizes) -> str:
    """Where finding 1b stands across the readings on the paper's network, in words: the best
    reading against the default's same network on the same runs, the kept readings still to
    record, and, once the best one has a verdict's runs, whether 1b fails under every reading
    tried (none within the threshold on run 0, the best one's verdict "does not reproduce")."""
    paper = frame[frame["rung"] == "paper"] if not frame.empty else frame
    others = paper[paper["reading"] != DEFAULT_READING.name] if not paper.empty else paper
    if others.empty:
        return "no reading other than the default is recorded on the paper's network yet, so this is not decided"
    best = others.loc[others["MLP / oracle"].idxmin()]
    default = _default_on(records, sizes, best)
    words = (f"the best recorded reading on the paper's network is {best['reading']} ({best['network']}, "
             f"{best['MLP / oracle']:.2f}× on {count(best['runs'], 'run')}, {best['verdict']})"
             + (f", against {default.mean_ratio:.2f}× for the default's {best['network']} on the same {count(default.runs, 'run')}"
                + _paired_words(records, sizes, best, default) if default is not None else ""))
    missing = [name for name in PAPER_READINGS if name not in set(others["reading"])]
    if missing:
        return words + f"; not recorded there yet: {', '.join(missing)}"
    within = paper[paper["MLP / oracle"] < ORACLE_FACTOR]
    if not within.empty:
        return words + f"; within {ORACLE_FACTOR:g}× there: " + ", ".join(f"{r['reading']} ({r['network']})" for _, r in within.iterrows())
    if best["runs"] >= MIN_RUNS and best["verdict"].startswith("does not reproduce"):
        rest = paper.drop(index=best.name)
        default_runs = paper.loc[paper["reading"] == DEFAULT_READING.name, "runs"]
        ids = sorted(set(rest.loc[rest["reading"] != DEFAULT_READING.name, "run ids"]))
        same = same_as_default(sizes.paper.width)
        alias = f"; {' and '.join(same)} {'is' if len(same) == 1 else 'are'} the default at this width" if same else ""
        return words + (f"; so finding 1b fails on the paper's network under every reading tried ({len(set(paper['reading'])) + len(same)}: "
                        f"the best on {count(best['runs'], 'run')}, the others at {span(rest['MLP / oracle'], '.2f')}×, "
                        f"the default on {count(int(default_runs.max()) if len(default_runs) else 0, 'run')} and the rest on "
                        f"{'run' if ids == ['0'] else 'runs'} {' / '.join(ids)}{alias})")
    if best["runs"] >= MIN_RUNS:
        # between the rule's two ends: too many runs within the threshold for "does not reproduce"
        return words + (f"; no reading recorded there comes within {ORACLE_FACTOR:g}× on the mean, and under the best "
                        f"one {best[f'within {ORACLE_FACTOR:g}×']} runs are within it, so 1b neither reproduces nor fails there by the rule")
    return words + f"; no reading recorded there comes within {ORACLE_FACTOR:g}×, and the best has fewer than {MIN_RUNS} runs"


def init_numbers(frame: pd.DataFrame, records: Mapping[Job, Mapping[str, Any]], profile: str | Profile = "long") -> dict[str, str]:
    """The page's glued words: the sweeps' design, each rung's readings in a sentence, the best
    reading on the paper's network against the default's same network on the same runs
    (``records``: the cells ``frame`` was built from), and what the recorded cells say of the
    default."""
    sizes = init_sizes(profile)
    out = {f"ir_{rung}": getattr(sizes, rung).label for rung in RUNGS}
    out |= {"ir_K": str(sizes.K), "ir_count": str(len(READINGS)), "ir_kept": ", ".join(PAPER_READINGS),
            "ir_screen_relu": " and ".join(SCREEN_RELU), "ir_default": DEFAULT_READING.name, "ir_min_runs": str(MIN_RUNS)}
    out |= {f"ir_{rung}_words": _reading_words(frame, rung) for rung in RUNGS}
    out["ir_wide_words"] = _wide_words(frame, records, sizes)
    out["ir_bound"] = _bound_words(frame)
    out["ir_likely"] = LIKELY_READING
    out["ir_likely_rank"] = _rank_words(frame, LIKELY_READING)
    out["ir_decides"] = _decides(frame, records, sizes)
    out["ir_same"] = _same_words(frame, sizes)
    return out


def kept_words(claims: Sequence[Claim]) -> str:
    """Findings 1a and 2 under each reading (:func:`best_reading_claims` of each) in one clause per
    reading: each claim's primary verdict and statistic on the means, with its runs, how many of
    its other readings agree and each dissenting one's verdict and statistic."""
    names = {CLAIMS["1a"]: "finding 1a", CLAIMS["2"]: "finding 2"}

    def verb(verdict: str, runs: int, unit: str) -> str:  # "reproduces", "is indicated (1 run)"
        label = verdict_label(verdict, runs, unit)
        return label if label.startswith(("reproduces", "does not")) else f"is {label}"
    by_reading: dict[str, list[str]] = {}
    for c in claims:
        stat = "; ".join(f"{p.label}: {p.mean:.3g}" for p in c.parts if p.mean is not None)
        # the runs lead, so that they read as the claim's and not the last K's; an indicated label names them
        runs = "" if c.verdict == "indicated" else f"{count(c.runs, c.unit)}; "
        dissent = [f'"{r.name}" {verb(r.verdict, r.runs, c.unit)} at '
                   + "; ".join(f"{p.mean:.3g}" for p in r.parts if p.mean is not None)
                   for r in c.readings if r.verdict != c.verdict]
        note = "" if not c.readings else (f"; {c.agreeing + 1} of {len(c.readings) + 1} readings agree"
                                          + (f", the others: {', '.join(dissent)}" if dissent else ""))
        by_reading.setdefault(c.detail.removeprefix("A.2 read as "), []).append(
            f"{names.get(c.claim, c.claim)} {verb(c.verdict, c.runs, c.unit)} ({runs}{stat}{note})")
    return "; ".join(f"under {name}, " + " and ".join(parts) for name, parts in by_reading.items()) or "none recorded yet"


def _control_gap_words(gaps: Mapping[Job, Mapping[str, Any]], sizes: InitSizes) -> str:
    """The best reading's network on the paper's rung at the control K, cluster by cluster (its
    gap cells): the median cluster against the ratio of means, and the oracle's worst cluster."""
    nets = {g: Job(f"mlp-{g.spec.network.activation}", g.data, g.spec.network, g.profile) for g in gaps}
    own = {g: gaps[g] for g, net in nets.items() if net.method == BEST_NETWORK and g.K == sizes.control_K
           and g.n == sizes.paper.n and (net.spec.width, net.spec.batch) == (sizes.paper.width, sizes.paper.batch)
           and (found := reading_of(net)) is not None and found.name == BEST_READING}
    if not own:
        return "not recorded yet"
    robust = gap_robust(gap_frame(own))
    return f"{count(len(own), 'run')}: " + gap_robust_words(robust, robust.iloc[0])


def best_numbers(records: Mapping[Job, Mapping[str, Any]], control: pd.DataFrame, profile: str | Profile = "long",
                 gaps: Mapping[Job, Mapping[str, Any]] | None = None) -> dict[str, str]:
    """The page's words on ``init-best``: the reading it trains, the run-0 ratios it was chosen
    by, each reading's numbers at the control K (``control``: :func:`init_frame` there) and the
    best network's there cluster by cluster (from ``gaps``, the ``init-gap`` cells)."""
    sizes = init_sizes(profile)
    found = run0_ratios(records, sizes)
    ratios = [f"{name} {m.removeprefix('mlp-')} {x:.2f}×" for (name, m), x in found.items()]
    choice = min(found, key=found.get) if found else None
    return {"ir_best": BEST_READING, "ir_best_network": BEST_NETWORK.removeprefix("mlp-"),
            "ir_run0": "; ".join(ratios) or "none recorded yet",
            "ir_choice": "none recorded yet" if choice is None else f"{choice[0]} ({choice[1].removeprefix('mlp-')})",
            "ir_control_K": str(sizes.control_K),
            "ir_control_words": _control_words(control, records, sizes),
            "ir_control_gap": _control_gap_words(gaps or {}, sizes)}
