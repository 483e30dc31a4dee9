"""Finding 1b under each reading of A.2's initialization: the tables, the verdicts, the figure
and the page's words, from the cells of :mod:`.init_readings`.

Every comparison is the ladder's (:func:`~.ladder.rung_verdicts`' rule): a network's test MSE
over the better per-cluster oracle's on the same runs' data (the lower mean of RFM, by its best
iteration, and Laplace), on the means and run by run, threshold
:data:`~.sample_efficiency.ORACLE_FACTOR`. The Laplace oracle alone is shown beside it, since
the paper names both ("a separate RFM or Laplace predictor within each cluster").
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...profiles import Profile, get_profile
from ...tables import count, span, thousands
from ..cache import Job
from ..families.kernels import ORACLE_LAPLACE
from ..verdicts import MIN_RUNS, Claim, Comparison, best_of, compare, verdict_label
from .finding_readings import GLOBALS, with_readings
from .init_readings import (BEST_NETWORK, BEST_READING, DEFAULT_READING, LIKELY_READING, NETWORKS, PAPER_READINGS, READINGS,
                            SCREEN_RELU, InitSizes, init_sizes, reading_of)
from .ladder import gap_frame, gap_robust, gap_robust_words, network_summary
from .sample_efficiency import CLAIMS, ORACLE_FACTOR, ORACLES, findings
from .sample_efficiency import claims as se_claims

__all__ = ["RUNGS", "reading_records", "reading_verdict", "run0_choice", "init_frame", "readings_table", "plot_readings",
           "init_numbers", "init_claims", "SUMMARY_COLUMNS", "init_summary", "best_reading_records", "best_reading_claims", "best_numbers",
           "kept_words"]

#: the rungs the readings are trained on, by the name the page gives them (:class:`InitSizes`'
#: fields): the ladder's foot, its widest rung at the foot's batch, the paper's network
RUNGS = ("foot", "wide", "paper")


def _rung(sizes: InitSizes, name: str):
    return getattr(sizes, name)


def reading_records(records: Mapping[Job, Mapping[str, Any]], sizes: InitSizes, rung: str, reading: str,
                    K: int | None = None) -> dict[Job, Mapping[str, Any]]:
    """The records of ``reading``'s networks on ``rung`` at ``K`` (default: the question's) and of
    both oracles at the rung's n."""
    K = sizes.K if K is None else K
    r = _rung(sizes, rung)
    out = {}
    for job, rec in records.items():
        if job.K != K or job.n != r.n:
            continue
        if job.method in ORACLES:
            out[job] = rec
        elif job.method in NETWORKS and (job.spec.width, job.spec.batch) == (r.width, r.batch):
            found = reading_of(job)
            if found is not None and found.name == reading:
                out[job] = rec
    return out


def reading_verdict(own: Mapping[Job, Mapping[str, Any]], method: str, K: int, n: int,
                    oracles: tuple[str, ...] = ORACLES) -> Comparison | None:
    """Finding 1b for ``method``'s network against the better of ``oracles`` (by mean) on one
    rung's records (:func:`reading_records`); ``None`` without both."""
    oracle = best_of(own, oracles, K, n)
    if oracle is None or not any(j.method == method for j in own):
        return None
    return compare(own, "1b", method, oracle, K, n, threshold=ORACLE_FACTOR)


def _run0_ratios(records: Mapping[Job, Mapping[str, Any]], sizes: InitSizes) -> dict[tuple[str, str], float]:
    """Run 0's MLP / better-oracle ratio on the paper's network of every recorded network of
    :data:`PAPER_READINGS`, by (reading, method)."""
    run0 = {j: r for j, r in records.items() if j.run == 0}
    found = {}
    for name in PAPER_READINGS:
        own = reading_records(run0, sizes, "paper", name)
        for m in NETWORKS:
            if (v := reading_verdict(own, m, sizes.K, sizes.paper.n)) is not None:
                found[(name, m)] = v.mean_ratio
    return found


def run0_choice(records: Mapping[Job, Mapping[str, Any]], profile: str | Profile = "long") -> tuple[str, str] | None:
    """The reading of :data:`PAPER_READINGS` and the network whose run 0 on the paper's network
    comes closest to the better oracle (the rule :data:`~.init_readings.BEST_READING` is chosen
    by); ``None`` before any is recorded."""
    found = _run0_ratios(records, init_sizes(profile))
    return min(found, key=found.get) if found else None


def _units(gaps: Mapping[Job, Mapping[str, Any]], jobs) -> dict[str, float]:
    """Page 03's units per cluster of the networks ``jobs`` from their gap cells (median over
    clusters of the active units whose best-aligned direction is the cluster's, the specialized
    ones among them, and the clusters with no specialized unit), NaN without a gap cell."""
    keys = {(j.data, j.spec) for j in jobs}
    found = [r["metrics"] for g, r in gaps.items() if (g.data, g.spec.network) in keys]
    if not found:
        return {"units per cluster": float("nan"), "specialized per cluster": float("nan"), "clusters without one": float("nan"),
                "specialized per cluster, predictive coordinates": float("nan")}
    units = np.array([m["units_by_cluster"] for m in found], dtype=float)
    spec = np.array([m["specialized_by_cluster"] for m in found], dtype=float)
    pred = [m["specialized_predictive_by_cluster"] for m in found if "specialized_predictive_by_cluster" in m]
    return {"units per cluster": float(np.median(units)), "specialized per cluster": float(np.median(spec)),
            "clusters without one": float(np.mean((spec == 0).sum(axis=1))),
            "specialized per cluster, predictive coordinates": float(np.median(pred)) if pred else float("nan")}


#: page 03's measures of a network, by column: the metric of its record (or its gap cell's) and a
#: scale (percent or as is)
_MEASURES = {"active %": ("n_active", None), "A ≥ .71 % of active": ("frac_A071", 100.0),
             "A ≥ .71 within the predictive coordinates, % of active": ("frac_A071_predictive", 100.0),
             "median share of |w| off the predictive coordinates": ("median_off_predictive_norm", 1.0)}


def _active(nets: Mapping[Job, Mapping[str, Any]], gaps: Mapping[Job, Mapping[str, Any]], width: int) -> dict[str, float]:
    """Page 03's measures of the networks (means over them): the active share of the width, the
    specialized share of the active units (A_j >= 0.71, eq. 1, and within the predictive
    coordinates) and how much of a unit's weight lies off the predictive coordinates; each from the
    network's record or else its gap cell (cells recorded before their records held it); NaN where
    neither has it."""
    by_net = {(g.data, g.spec.network): r["metrics"] for g, r in gaps.items()}
    out = {}
    for column, (metric, scale) in _MEASURES.items():
        values = []
        for j, rec in nets.items():
            m = rec["metrics"] if metric in rec["metrics"] else by_net.get((j.data, j.spec), {})
            if metric in m and m[metric] is not None:
                values.append(float(m[metric]))
        mean = float(np.mean(values)) if values else float("nan")
        out[column] = 100 * mean / width if scale is None else scale * mean
    return out


def _row(own, method: str, sizes: InitSizes, rung: str, reading: str, K: int, gaps) -> dict[str, Any] | None:
    r = _rung(sizes, rung)
    verdict = reading_verdict(own, method, K, r.n)
    if verdict is None:
        return None
    laplace = reading_verdict(own, method, K, r.n, oracles=(ORACLE_LAPLACE,))
    nets = {j: rec for j, rec in own.items() if j.method == method}
    row, stops = network_summary(nets, verdict)
    lead = dict(list(row.items())[:3])
    return {"K": K, "rung": rung, "width": r.width, "batch": r.batch, "n": r.n, "reading": reading,
            "network": method.removeprefix("mlp-"), **lead, "MLP / Laplace oracle": laplace.mean_ratio if laplace else np.nan,
            "stopped": ", ".join(f"{int(v)} {k}" for k, v in stops.items()), **{k: v for k, v in row.items() if k not in lead},
            **_active(nets, gaps, r.width), **_units(gaps, nets)}


def init_frame(records: Mapping[Job, Mapping[str, Any]], gaps: Mapping[Job, Mapping[str, Any]],
               profile: str | Profile = "long", K: int | None = None) -> pd.DataFrame:
    """One row per (rung, reading, network) with a recorded run: the ratio to the better oracle
    (finding 1b's measure: mean, runs within the threshold, verdict, every run's ratio), to the
    Laplace oracle alone, how the networks stopped and after how many updates, their one-core
    hours, and page 03's specialization measures: the active share of the width, the specialized
    share of the active units (A_j >= 0.71) and, where a gap cell scored the network, its units
    per cluster."""
    sizes = init_sizes(profile)
    rows = []
    for rung in RUNGS if sizes else ():
        for name in READINGS:
            own = reading_records(records, sizes, rung, name, K)
            rows += [row for m in NETWORKS if (row := _row(own, m, sizes, rung, name, sizes.K if K is None else K, gaps))]
    return pd.DataFrame(rows)


#: the columns of :func:`init_frame` a reader needs first (the rest fold under them on the page)
SUMMARY_COLUMNS = ("rung", "reading", "network", "runs", "MLP / oracle", f"within {ORACLE_FACTOR:g}×", "per run",
                   "MLP / Laplace oracle",
                   "stopped", "updates", "core hours per network", "active %",
                   "A ≥ .71 within the predictive coordinates, % of active", "units per cluster")


def init_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`init_frame`'s leading columns (:data:`SUMMARY_COLUMNS`), one row per network."""
    return frame[[c for c in SUMMARY_COLUMNS if c in frame]] if not frame.empty else frame


def readings_table() -> pd.DataFrame:
    """The registered readings: what each sets, and where it comes from."""
    rows = [{"reading": r.name, "init": r.init, "hidden scale": r.hidden_scale, "readout rate": r.readout_rate,
             "output": "(1/m) Σ" if r.mean_field else "Σ", "source": r.source} for r in READINGS.values()]
    return pd.DataFrame(rows).set_index("reading")


def plot_readings(frame: pd.DataFrame, title: str = ""):
    """One panel per rung: each reading's MLP / better-oracle ratio (ReGLU and ReLU side by side;
    a point per run's mean, a band over the runs where a reading has the verdict rule's runs),
    with finding 1b's threshold, on the paper's log scale."""
    import matplotlib.pyplot as plt

    from ... import plots

    names = list(READINGS)
    colors, offsets = {"reglu": "tab:red", "relu": "tab:blue"}, {"reglu": -0.12, "relu": 0.12}
    with plots.paper_style():
        fig, axes = plt.subplots(1, len(RUNGS), figsize=(11, 3.8), squeeze=False, layout="constrained", sharey=True)
        for ax, rung in zip(axes[0], RUNGS):
            rows = frame[frame["rung"] == rung] if not frame.empty else frame
            for net, color in colors.items():
                sel = rows[rows["network"] == net] if not rows.empty else rows
                for _, row in sel.iterrows():
                    x = names.index(row["reading"]) + offsets[net]
                    runs = [float(v) for v in row["per run"].split(", ")]
                    if len(runs) >= MIN_RUNS:
                        ax.fill_between([x - 0.08, x + 0.08], min(runs), max(runs), color=color, alpha=0.2, lw=0)
                    capped = "cap" in row["stopped"]
                    ax.plot([x], [row["MLP / oracle"]], ls="none", marker="s", ms=6, color=color,
                            markerfacecolor="none" if capped else color)
            ax.axhline(ORACLE_FACTOR, color="0.3", ls="--", lw=1)
            ax.axhline(1.0, color="0.6", ls=":", lw=1)
            ax.set_yscale("log")
            ax.set_xticks(range(len(names)), [n.replace(" ", "\n", 1) for n in names], fontsize=7)
            ax.set_xlim(-0.5, len(names) - 0.5)
            r = rows.iloc[0] if not rows.empty else None
            ax.set_title(f"{rung}: {thousands(r['width'])} × {thousands(r['batch'])}, n = {thousands(r['n'])}" if r is not None else rung)
        axes[0][0].set_ylabel("MLP / better oracle")
        handles = [plt.Line2D([], [], color=c, ls="none", marker="s", label=n) for n, c in (("ReGLU", "tab:red"), ("ReLU", "tab:blue"))]
        handles += [plt.Line2D([], [], color="0.3", ls="none", marker="s", markerfacecolor="none", label="at the update cap"),
                    plt.Line2D([], [], color="0.3", ls="--", label=f"{ORACLE_FACTOR:g}× (finding 1b)"),
                    plt.Rectangle((0, 0), 1, 1, color="0.3", alpha=0.2, lw=0, label=f"the runs' range (≥ {MIN_RUNS} runs; the point: ratio of means)")]
        fig.legend(handles=handles, loc="outside lower center", ncol=5)
        if title:
            fig.suptitle(title)
    return fig


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

    def span(values, fmt: str) -> str:
        lo, hi = float(values.min()), float(values.max())
        return format(lo, fmt) if format(lo, fmt) == format(hi, fmt) else f"{format(lo, fmt)}–{format(hi, fmt)}"
    return (f"over the {len(rows)} networks that hold both, {span(rows['A ≥ .71 % of active'], '.1f')} % of the active units on "
            f"eq. (1) against {span(rows[col], '.1f')} % within the predictive coordinates, with a median "
            f"{span(100 * rows['median share of |w| off the predictive coordinates'], '.0f')} % of |w| off them")


def _on_runs(records: Mapping[Job, Mapping[str, Any]], sizes: InitSizes, row: pd.Series, reading: str) -> Comparison | None:
    """``reading``'s network of ``row`` on ``row``'s rung and K over ``row``'s runs alone."""
    runs, K = {int(r) for r in row["run ids"].split(", ")}, int(row["K"])
    own = reading_records({j: r for j, r in records.items() if j.run in runs}, sizes, row["rung"], reading, K)
    return reading_verdict(own, f"mlp-{row['network']}", K, _rung(sizes, row["rung"]).n)


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
        return words + (f"; so finding 1b fails on the paper's network under every reading tried ({len(set(paper['reading']))}: "
                        f"the best on {count(best['runs'], 'run')}, the others at {span(rest['MLP / oracle'], '.2f')}×, "
                        f"the default on {count(int(default_runs.max()) if len(default_runs) else 0, 'run')} and the rest on "
                        f"{'run' if ids == ['0'] else 'runs'} {' / '.join(ids)})")
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
    out = {f"ir_{rung}": _rung(sizes, rung).label for rung in RUNGS}
    out |= {"ir_K": str(sizes.K), "ir_count": str(len(READINGS)), "ir_kept": ", ".join(PAPER_READINGS),
            "ir_screen_relu": " and ".join(SCREEN_RELU), "ir_default": DEFAULT_READING.name, "ir_min_runs": str(MIN_RUNS)}
    out |= {f"ir_{rung}_words": _reading_words(frame, rung) for rung in RUNGS}
    out["ir_wide_words"] = _wide_words(frame, records, sizes)
    out["ir_bound"] = _bound_words(frame)
    out["ir_likely"] = LIKELY_READING
    out["ir_likely_rank"] = _rank_words(frame, LIKELY_READING)
    out["ir_decides"] = _decides(frame, records, sizes)
    return out


def init_claims(records: Mapping[Job, Mapping[str, Any]], page: str, profile: str | Profile = "long") -> list[Claim]:
    """Finding 1b on the paper's network per recorded reading other than the default (the default
    is the ladder's row), the best network of each: a row of the verdict box and the status page."""
    sizes = init_sizes(profile)
    if sizes is None:
        return []
    out = []
    for name in PAPER_READINGS:
        own = reading_records(records, sizes, "paper", name)
        verdicts = [v for m in NETWORKS if (v := reading_verdict(own, m, sizes.K, sizes.paper.n)) is not None]
        if not verdicts:
            continue
        best = min(verdicts, key=lambda v: v.mean_ratio)
        label = f"K = {sizes.K}, {best.a.removeprefix('mlp-')} / {best.b}"
        out.append(Claim.judged(page, CLAIMS["1b"], [best.part(label)], f"{label}: {best.evidence}",
                                profile=f"{get_profile(profile).name} (recorded)", width=sizes.paper.width, batch=sizes.paper.batch,
                                n=sizes.paper.n, detail=f"A.2 read as {name}"))
    return out


def best_reading_records(records: Mapping[Job, Mapping[str, Any]], global_records: Mapping[Job, Mapping[str, Any]],
                         reading: str = BEST_READING, profile: str | Profile = "long") -> dict[Job, Mapping[str, Any]]:
    """Everything findings 1a, 1b and 2 need on the paper's network under ``reading``, at the
    question's K and the control K: its networks, the oracles, and the global methods of the same
    data from ``global_records`` (Figure 2's cells: they do not depend on the network)."""
    sizes = init_sizes(profile)
    out: dict[Job, Mapping[str, Any]] = {}
    for K in _Ks(sizes):
        out |= reading_records(records, sizes, "paper", reading, K)
        out |= {j: r for j, r in global_records.items() if j.method in GLOBALS and j.K == K and j.n == sizes.paper.n}
    return out


def _Ks(sizes: InitSizes) -> tuple[int, ...]:
    return (sizes.K,) if sizes.control_K is None else (sizes.control_K, sizes.K)


def best_reading_claims(records: Mapping[Job, Mapping[str, Any]], global_records: Mapping[Job, Mapping[str, Any]], page: str,
                        reading: str = BEST_READING, profile: str | Profile = "long") -> list[Claim]:
    """Findings 1a and 2 on the paper's network under ``reading`` (1b is :func:`init_claims`'),
    judged by Section 3.2's rule with their readings, so that a reading that brings finding 1b
    closer is seen to keep, or lose, the others."""
    sizes = init_sizes(profile)
    if sizes is None:
        return []
    own = best_reading_records(records, global_records, reading, profile)
    if not any(j.method in NETWORKS for j in own):
        return []
    Ks, n = _Ks(sizes), sizes.paper.n
    kept = (CLAIMS["1a"], CLAIMS["2"])
    found = [c for c in se_claims(findings(own, Ks, n), page, f"{get_profile(profile).name} (recorded)", sizes.paper.width,
                                  sizes.paper.batch) if c.claim in kept]
    return [dataclasses.replace(c, detail=f"A.2 read as {reading}") for c in with_readings(found, own, Ks, n, mlps=NETWORKS)]


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
        runs = "" if c.verdict == "indicated" else f", {count(c.runs, c.unit)}"  # the label names them
        dissent = [f'"{r.name}" {verb(r.verdict, r.runs, c.unit)} at '
                   + "; ".join(f"{p.mean:.3g}" for p in r.parts if p.mean is not None)
                   for r in c.readings if r.verdict != c.verdict]
        note = "" if not c.readings else (f"; {c.agreeing + 1} of {len(c.readings) + 1} readings agree"
                                          + (f", the others: {', '.join(dissent)}" if dissent else ""))
        by_reading.setdefault(c.detail.removeprefix("A.2 read as "), []).append(
            f"{names.get(c.claim, c.claim)} {verb(c.verdict, c.runs, c.unit)} ({stat}{runs}{note})")
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
    found = _run0_ratios(records, sizes)
    ratios = [f"{name} {m.removeprefix('mlp-')} {x:.2f}×" for (name, m), x in found.items()]
    choice = min(found, key=found.get) if found else None
    return {"ir_best": BEST_READING, "ir_best_network": BEST_NETWORK.removeprefix("mlp-"),
            "ir_run0": "; ".join(ratios) or "none recorded yet",
            "ir_choice": "none recorded yet" if choice is None else f"{choice[0]} ({choice[1].removeprefix('mlp-')})",
            "ir_control_K": str(sizes.control_K),
            "ir_control_words": _control_words(control, records, sizes),
            "ir_control_gap": _control_gap_words(gaps or {}, sizes)}
