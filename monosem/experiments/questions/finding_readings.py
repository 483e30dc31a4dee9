"""Section 3.2's findings 1a and 1b in their readings: the paper's words, each read several ways,
every reading judged by the one rule on the same runs.

The paper (Section 3.2, finding 1): "MLPs outperform other methods as the number of clusters
increases. Remarkably, MLPs achieve performance close to that of 'oracle' baselines that are given
the true cluster identities and fit a separate RFM or Laplace predictor within each cluster. Thus,
MLPs recover much of the benefit of knowing the cluster structure"; and (Section 1) "increasingly
favorable sample-complexity scaling as the number of clusters grows". "Close", "much" and
"increasingly" are not numbers: each reading below fixes one, with its threshold a named constant
here, and a claim's box line names its primary reading and how many of the others agree.

Finding 1b, at one (K, n):

* **within 2× of the better oracle** (primary): "close to that of oracle baselines" is a ratio of
  errors; of "RFM or Laplace" the better oracle is the stricter;
* within 2× of the Laplace oracle, and of the RFM oracle, each alone ("RFM *or* Laplace");
* the share of the gap between the better global method and the better oracle that the MLP
  closes, at least :data:`MUCH` ("much of the benefit"), on a linear scale and on the log scale
  the paper's figures are drawn on.

Finding 1a, across K at one n:

* **the best MLP beats global RFM at the largest K** (primary): "outperform ... as the number of
  clusters increases" says who wins when the clusters are many;
* the best MLP / global RFM ratio falls at every step in K ("increasingly favorable ... as the
  number of clusters grows", read literally), and from the smallest K to the largest.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from ..families.kernels import LAPLACE, ORACLE_LAPLACE, ORACLE_RFM, RFM
from ..verdicts import Claim, Part, Reading, best_of, compare, per_run, verdict_label
from .sample_efficiency import CLAIMS, FIGURE2_MLPS, ORACLE_FACTOR, ORACLES

__all__ = ["MUCH", "GLOBALS", "PRIMARY_1B", "PRIMARY_1A", "gap_share", "gap_part", "readings_1b", "trend_part", "readings_1a",
           "with_readings", "ladder_with_readings", "readings_frame", "reading_counts", "claim_sentence",
           "plot_positions"]

#: "much of the benefit of knowing the cluster structure": at least this share of the gap between
#: the better global method and the better oracle closed by the MLP
MUCH = 0.5
#: the global methods of Figure 2 (the gap's upper end is the better of them)
GLOBALS = (RFM, LAPLACE)
#: the primary readings' names
PRIMARY_1B = f"within {ORACLE_FACTOR:g}× of the better oracle"
PRIMARY_1A = "beats global RFM at the largest K"


def gap_share(mlp: float, glob: float, oracle: float, log: bool = False) -> float:
    """The share of the global -> oracle gap the MLP closes, (g - m) / (g - o), or the same of the
    logarithms: 1 at the oracle, 0 at the global method, negative above it, above 1 below the
    oracle. NaN where the oracle is not below the global method (no gap to close)."""
    if log:
        mlp, glob, oracle = (math.log(v) for v in (mlp, glob, oracle))
    return (glob - mlp) / (glob - oracle) if glob > oracle else float("nan")


def gap_part(records: Mapping, mlp: str, glob: str, oracle: str, K: int, n: int, log: bool, rule: str = "best") -> Part:
    """The gap share (:func:`gap_share`) on the means and run by run over the runs all three
    methods share; it holds at :data:`MUCH` or more."""
    m, g, o = (per_run(records, x, K, n, rule) for x in (mlp, glob, oracle))
    runs = sorted(set(m) & set(g) & set(o))
    label = f"K = {K}, {mlp.removeprefix('mlp-')} between {glob} and {oracle}{' (log)' if log else ''}"
    if not runs:
        return Part(label, None, (), low=MUCH, closed=True)
    mean = gap_share(*(float(np.mean([d[r] for r in runs])) for d in (m, g, o)), log=log)
    return Part(label, mean, tuple(gap_share(m[r], g[r], o[r], log=log) for r in runs), low=MUCH, closed=True)


def readings_1b(records: Mapping, K: int, n: int, mlps: Iterable[str] = FIGURE2_MLPS, rule: str = "best") -> list[Reading]:
    """Finding 1b's readings other than the primary at (K, n) on ``records`` (the networks of
    one scale, the oracles and, for the gap readings, the global methods): each oracle alone, and
    the gap closed, linear and log. A reading whose methods are not all recorded is left out."""
    best = best_of(records, mlps, K, n, rule)
    if best is None:
        return []
    out = [Reading(f"within {ORACLE_FACTOR:g}× of the {o.removeprefix('oracle-').replace('rfm', 'RFM').replace('laplace', 'Laplace')} oracle",
                   (c.part(f"K = {K}, {best.removeprefix('mlp-')} / {o}"),), why="\"RFM or Laplace\": either oracle alone")
           for o in (ORACLE_LAPLACE, ORACLE_RFM) if (c := compare(records, "1b", best, o, K, n, threshold=ORACLE_FACTOR, rule=rule)).runs]
    glob, oracle = best_of(records, GLOBALS, K, n, rule), best_of(records, ORACLES, K, n, rule)
    if glob is not None and oracle is not None:
        for log in (False, True):
            part = gap_part(records, best, glob, oracle, K, n, log, rule)
            if part.mean is not None:
                out.append(Reading(f"closes ≥ {MUCH:.0%} of the global → oracle gap{' (log scale)' if log else ''}", (part,),
                                   why="\"much of the benefit of knowing the cluster structure\""
                                   + (", on the paper's log axes" if log else "")))
    return out


def _ratios(records: Mapping, K: int, n: int, rule: str, mlps: Iterable[str]) -> tuple[float, dict[int, float]] | None:
    """The best MLP / global RFM at K: on the means and per run (``None`` without both)."""
    best = best_of(records, mlps, K, n, rule)
    if best is None:
        return None
    c = compare(records, "1a", best, RFM, K, n, rule=rule)
    return (c.mean_ratio, dict(c.ratios)) if c.runs else None


def trend_part(records: Mapping, Ks: Iterable[int], n: int, steps: bool, rule: str = "best",
               mlps: Iterable[str] = FIGURE2_MLPS) -> Part | None:
    """The best MLP / global RFM ratio across K: with ``steps`` the largest quotient of one K's
    ratio over the previous K's (below 1: it falls at every step), else the largest K's over the
    smallest K's; on the means and run by run over the runs every K has. ``None`` with fewer than
    two K recorded."""
    by_K = {K: r for K in sorted(Ks) if (r := _ratios(records, K, n, rule, mlps)) is not None}
    if len(by_K) < 2:
        return None
    Ks = list(by_K)
    runs = sorted(set.intersection(*(set(v[1]) for v in by_K.values())))
    pairs = list(zip(Ks, Ks[1:])) if steps else [(Ks[0], Ks[-1])]

    def stat(ratio_at) -> float:
        return max(ratio_at(b) / ratio_at(a) for a, b in pairs)
    label = f"K = {', '.join(map(str, Ks))}: {'largest step' if steps else f'K = {Ks[-1]} over K = {Ks[0]}'}"
    return Part(label, stat(lambda K: by_K[K][0]), tuple(stat(lambda K, r=r: by_K[K][1][r]) for r in runs), high=1.0)


def readings_1a(records: Mapping, Ks: Iterable[int], n: int, rule: str = "best", mlps: Iterable[str] = FIGURE2_MLPS) -> list[Reading]:
    """Finding 1a's trend readings across ``Ks`` at n (the primary, at the largest K, is the
    claim's own parts)."""
    out = []
    for steps, name, why in ((True, "MLP / global RFM falls at every step in K", "\"increasingly favorable ... as the number of clusters grows\""),
                             (False, "MLP / global RFM lower at the largest K than the smallest", "the same, end to end")):
        part = trend_part(records, Ks, n, steps, rule, mlps)
        if part is not None:
            out.append(Reading(name, (part,), why=why))
    return out


def with_readings(claims: Iterable[Claim], records: Mapping, Ks: Iterable[int], n: int, rule: str = "best",
                  mlps: Iterable[str] = FIGURE2_MLPS) -> list[Claim]:
    """``claims`` with findings 1a and 1b carrying their readings at the largest K of ``Ks`` and
    training size ``n`` (every other claim as it is)."""
    Ks = sorted(Ks)
    out = []
    for c in claims:
        if c.claim == CLAIMS["1b"]:
            c = dataclasses.replace(c, reading=PRIMARY_1B, readings=tuple(readings_1b(records, Ks[-1], n, mlps, rule)))
        elif c.claim == CLAIMS["1a"]:
            c = dataclasses.replace(c, reading=PRIMARY_1A, readings=tuple(readings_1a(records, Ks, n, rule, mlps)))
        out.append(c)
    return out


def readings_frame(claims: Iterable[Claim]) -> pd.DataFrame:
    """Every reading of every claim that has several: the claim's scale, the reading (primary
    first), its verdict, the statistic on the means and in each run, what it reads."""
    rows = []
    for c in claims:
        if not c.readings:
            continue
        for name, parts, why, primary in ((c.reading, c.parts, "primary", True), *((r.name, r.parts, r.why, False) for r in c.readings)):
            verdict = c.verdict if primary else Reading(name, parts).verdict
            runs = min((len(p.values) for p in parts), default=0)
            rows.append({"claim": c.claim, "scale": c.scale, "reading": name, "verdict": verdict_label(verdict, runs),
                         "on the means": "; ".join(f"{p.mean:.3g}" for p in parts if p.mean is not None),
                         "per run": "; ".join(", ".join(f"{v:.2f}" for v in p.values) for p in parts), "reads": why})
    return pd.DataFrame(rows)


def reading_counts(claims: Iterable[Claim]) -> dict[str, int]:
    """How many claims carry several readings, and how many of those change verdict with the
    reading."""
    several = [c for c in claims if c.readings]
    return {"with readings": len(several), "depend on the reading": sum(c.depends_on_reading for c in several)}


def ladder_with_readings(claims: Iterable[Claim], ladder_records: Mapping, global_records: Mapping,
                         profile: str = "long") -> list[Claim]:
    """The ladder's finding 1b rows (:func:`~.ladder.ladder_claims`) with their readings: each on
    its rung's networks and oracles, and the global methods of the same data from
    ``global_records`` (Figure 2's cells: the global methods do not depend on the network)."""
    from .ladder import ladder_sizes

    sizes = ladder_sizes(profile)
    K = sizes.Ks[0]
    out = []
    for c in claims:
        rung = next((r for r in sizes.rungs if (r.width, r.batch, r.n) == (c.width, c.batch, c.n)), None)
        if rung is None:
            out.append(c)
            continue
        own = {j: r for j, r in ladder_records.items() if j.K == K and j.n == rung.n and
               (j.method in ORACLES or (j.method in rung.networks and (j.spec.width, j.spec.batch) == (rung.width, rung.batch)))}
        own |= {j: r for j, r in global_records.items() if j.method in GLOBALS and j.K == K and j.n == rung.n}
        out.append(dataclasses.replace(c, reading=PRIMARY_1B, readings=tuple(readings_1b(own, K, rung.n, rung.networks))))
    return out


def claim_sentence(claim: Claim) -> str:
    """A claim's verdict in one sentence that names its primary reading and scale, then each
    other reading's verdict and statistic on the means."""
    def stat(parts) -> str:
        return "; ".join(f"{p.mean:.2f}" for p in parts if p.mean is not None)
    others = "; ".join(f"{r.name}: {verdict_label(r.verdict, min((len(p.values) for p in r.parts), default=0))} ({stat(r.parts)})"
                       for r in claim.readings)
    return (f"read as {claim.reading}, it {claim.label} at {claim.scale} ({stat(claim.parts)} on the means)"
            + (f". Other readings: {others}" if others else ""))


def plot_positions(records: Mapping, Ks: Iterable[int], n: int, mlps: Iterable[str] = FIGURE2_MLPS, rule: str = "best", title: str = ""):
    """Per K at training size n: the mean test MSE of both global methods, both oracles and the
    best MLP (its runs as points), on the paper's log scale: where the MLP sits between them."""
    import matplotlib.pyplot as plt

    from ... import plots

    Ks = sorted(Ks)
    styles = {LAPLACE: ("Laplace (global)", "tab:gray", "v"), RFM: ("RFM (global)", "k", "^"),
              ORACLE_LAPLACE: ("Laplace oracle", "tab:olive", "D"), ORACLE_RFM: ("RFM oracle", "tab:green", "s")}
    with plots.paper_style():
        fig, ax = plt.subplots(figsize=(5.2, 3.6), layout="constrained")
        for m, (label, color, marker) in styles.items():
            means = [np.mean(list(v.values())) if (v := per_run(records, m, K, n, rule)) else np.nan for K in Ks]
            ax.plot(range(len(Ks)), means, color=color, marker=marker, lw=1, label=label)
        best = [best_of(records, mlps, K, n, rule) for K in Ks]
        runs = [per_run(records, b, K, n, rule) if b else {} for b, K in zip(best, Ks)]
        ax.plot(range(len(Ks)), [np.mean(list(r.values())) if r else np.nan for r in runs], color="tab:red", marker="o", lw=2,
                label="best MLP")
        for i, r in enumerate(runs):
            ax.plot([i] * len(r), list(r.values()), ls="none", marker="o", ms=3, color="tab:red", alpha=0.4)
        ax.set_yscale("log")
        ax.set_xticks(range(len(Ks)), [str(K) for K in Ks])
        ax.set_xlabel("K (clusters)")
        ax.set_ylabel(f"test MSE at n = {n:,}".replace(",", "\u202f"))
        ax.legend(fontsize=7, loc="best")
        if title:
            ax.set_title(title)
    return fig
