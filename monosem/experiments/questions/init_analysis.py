"""Finding 1b under each reading of A.2's initialization: the tables, the verdicts and the figure,
from the cells of :mod:`.init_readings` (the page's words are :mod:`.init_words`').

Every comparison is the ladder's (:func:`~.ladder.rung_verdicts`' rule): a network's test MSE
over the better per-cluster oracle's on the same runs' data (the lower mean of RFM, by its best
iteration, and Laplace), on the means and run by run, threshold
:data:`~.sample_efficiency.ORACLE_FACTOR`. The Laplace oracle alone is shown beside it, since
the paper names both ("a separate RFM or Laplace predictor within each cluster").
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ...profiles import Profile, get_profile
from ...tables import thousands
from ..cache import Job
from ..families.kernels import ORACLE_LAPLACE
from ..verdicts import MIN_RUNS, Claim, Comparison, best_of, compare
from .finding_readings import GLOBALS, with_readings
from .init_readings import (BEST_READING, DEFAULT_READING, NETWORKS, PAPER_READINGS, READINGS, InitSizes, init_sizes, reading_of,
                            same_as_default)
from .ladder import network_summary
from .sample_efficiency import CLAIMS, ORACLE_FACTOR, ORACLES, findings
from .sample_efficiency import claims as se_claims

__all__ = ["RUNGS", "reading_records", "reading_verdict", "run0_ratios", "run0_choice", "init_frame", "readings_table",
           "plot_readings", "init_claims", "SUMMARY_COLUMNS", "init_summary", "best_reading_records", "best_reading_claims"]

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


def run0_ratios(records: Mapping[Job, Mapping[str, Any]], sizes: InitSizes) -> dict[tuple[str, str], float]:
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
    found = run0_ratios(records, init_sizes(profile))
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
            if not rows.empty:  # a reading that starts this width's networks as the default does has its cells
                for name in same_as_default(int(rows.iloc[0]["width"])):
                    ax.text(names.index(name), 0.5, f"= {DEFAULT_READING.name}", transform=ax.get_xaxis_transform(),
                            rotation=90, ha="center", va="center", fontsize=7, color="0.35")
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
