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
from ..verdicts import EQUIVALENCE_MARGIN, Claim, Part, Reading, best_of, compare, per_run, verdict_label
from .sample_efficiency import CLAIMS, FIGURE2_MLPS, ORACLE_FACTOR, ORACLES

__all__ = ["MUCH", "GLOBALS", "PRIMARY_1B", "PRIMARY_1A", "gap_share", "gap_part", "readings_1b", "trend_part", "readings_1a",
           "with_readings", "ladder_with_readings", "readings_frame", "reading_counts", "claim_sentence",
           "plot_positions", "SUBSTANTIAL", "MORE_CLAIMS", "LINK_EXPERIMENT", "readings_2", "readings_gelu", "more_claims"]

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
                  mlps: Iterable[str] = FIGURE2_MLPS, ns: Iterable[int] | None = None) -> list[Claim]:
    """``claims`` with findings 1a, 1b, 2 (given the grid's sizes ``ns``) and "GELU behaves
    similarly to ReLU" carrying their readings at the largest K of ``Ks`` and training size ``n``
    (every other claim as it is). A reading with nothing recorded is not shown; a claim left with
    none keeps its one reading."""
    Ks = sorted(Ks)
    out = []
    for c in claims:
        if c.claim == CLAIMS["1b"]:
            c = dataclasses.replace(c, reading=PRIMARY_1B, readings=tuple(readings_1b(records, Ks[-1], n, mlps, rule)))
        elif c.claim == CLAIMS["1a"]:
            c = dataclasses.replace(c, reading=PRIMARY_1A, readings=tuple(readings_1a(records, Ks, n, rule, mlps)))
        elif c.claim == CLAIMS["2"] and ns is not None:
            c = dataclasses.replace(c, reading="ReGLU below ReLU at every K ≥ 10", readings=tuple(readings_2(records, Ks, n, ns, rule)))
        elif c.claim == CLAIMS["gelu~relu"]:
            c = dataclasses.replace(c, reading=f"GELU / ReLU within {EQUIVALENCE_MARGIN:g}× either way at every K",
                                    readings=tuple(readings_gelu(records, Ks, n, rule)))
        out.append(c if c.readings else dataclasses.replace(c, reading=""))
    return out


def readings_frame(claims: Iterable[Claim], every: bool = False) -> pd.DataFrame:
    """Every reading of every claim that has several (with ``every``, of every claim: one read
    one way is its one row): the claim's scale, the reading (primary first), its verdict, the
    statistic on the means and in each run, what it reads."""
    rows = []
    for c in claims:
        if not c.readings and not every:
            continue
        for r in (Reading(c.reading or "as stated", c.parts, "primary"), *c.readings):
            rows.append({"claim": c.claim, "scale": c.scale, "reading": r.name, "verdict": verdict_label(r.verdict, r.runs, c.unit),
                         "on the means": "; ".join(f"{p.mean:.3g}" for p in r.parts if p.mean is not None),
                         "per run": "; ".join(", ".join(f"{v:.2f}" for v in p.values) for p in r.parts), "reads": r.why})
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
    from .ladder import rung_records

    sizes = ladder_sizes(profile)
    K = sizes.Ks[0]
    out = []
    for c in claims:
        rung = next((r for r in sizes.rungs if (r.width, r.batch, r.n) == (c.width, c.batch, c.n)), None)
        if rung is None:
            out.append(c)
            continue
        own = rung_records(ladder_records, sizes, rung, K)
        own |= {j: r for j, r in global_records.items() if j.method in GLOBALS and j.K == K and j.n == rung.n}
        out.append(dataclasses.replace(c, reading=PRIMARY_1B, readings=tuple(readings_1b(own, K, rung.n, rung.networks))))
    return out


def claim_sentence(claim: Claim) -> str:
    """A claim's verdict in one sentence that names its primary reading and scale, then each
    other reading's verdict and statistic on the means."""
    def stat(parts) -> str:
        return "; ".join(f"{p.mean:.2f}" for p in parts if p.mean is not None)
    others = "; ".join(f"{r.name}: {verdict_label(r.verdict, r.runs)} ({stat(r.parts)})"
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


# --------------------------------------------------------------- finding 2 and Figure 6's words
#: "substantially": at least this much lower a test MSE (ratio below it: 20 % lower error)
SUBSTANTIAL = 0.8
#: the claims of Section 3.2 the findings table does not judge, in the paper's words
MORE_CLAIMS = {
    "relu": "\u201cReLU \u2026 substantially outperforms global RFM when many clusters are present\u201d (§3.2)",
    "uneven": "\u201cThe improvement [of gating] is not uniform in the smallest-data regime\u201d (A.2)",
    "link": "\u201cSpecialized neurons improve data efficiency\u201d (title): the networks that come close to the oracle "
            "are the specialized ones",
}
#: what would judge the title's causal link, which no recorded cell can
LINK_EXPERIMENT = ("not judged by these records: it needs, at one scale, networks that do and networks that do not come "
                   "close to the oracle, page 03's units per cluster of each, and a change that moves specialization alone "
                   "(the initialization readings of this page move it; their cells record both numbers)")


def _parts(records: Mapping, a: str, b: str, Ks: Iterable[int], n: int, *, threshold: float = 1.0, lower: float = 0.0,
           rule: str = "best", n_b: int | None = None) -> tuple[Part, ...]:
    """``a / b`` below ``threshold`` (above ``lower``) at each K where both ran, ``b`` at ``n_b``
    (default ``n``) when it differs: on the means and run by run."""
    out = []
    for K in Ks:
        ra, rb = per_run(records, a, K, n, rule), per_run(records, b, K, n if n_b is None else n_b, rule)
        runs = sorted(set(ra) & set(rb))
        if runs:
            mean = float(np.mean([ra[r] for r in runs])) / float(np.mean([rb[r] for r in runs]))
            out.append(Part(f"K = {K}", mean, tuple(ra[r] / rb[r] for r in runs), low=lower, high=threshold))
    return tuple(out)


def _same_side(records: Mapping, Ks: Iterable[int], n: int, rule: str = "best") -> tuple[Part, ...]:
    """GELU on the same side of global RFM as ReLU at each K: (GELU / RFM - 1)(ReLU / RFM - 1) > 0,
    on the means and run by run."""
    out = []
    for K in Ks:
        g, r, k = (per_run(records, m, K, n, rule) for m in ("mlp-gelu", "mlp-relu", RFM))
        runs = sorted(set(g) & set(r) & set(k))
        if runs:
            def side(gv, rv, kv):
                return (gv / kv - 1) * (rv / kv - 1)
            mean = side(*(float(np.mean([d[x] for x in runs])) for d in (g, r, k)))
            out.append(Part(f"K = {K}", mean, tuple(side(g[x], r[x], k[x]) for x in runs), low=0.0))
    return tuple(out)


def readings_2(records: Mapping, Ks: Iterable[int], n: int, ns: Iterable[int], rule: str = "best") -> list[Reading]:
    """Finding 2's other readings ("gating can substantially improve sample efficiency", §1):
    ReGLU at least 20 % below ReLU at every K >= 10; and, at the largest n, ReGLU at the smallest
    n no worse than :data:`~..verdicts.EQUIVALENCE_MARGIN` × ReLU at the largest, at every K >= 10."""
    big = [K for K in sorted(Ks) if K >= 10]
    out = []
    if parts := _parts(records, "mlp-reglu", "mlp-relu", big, n, threshold=SUBSTANTIAL, rule=rule):
        out.append(Reading(f"ReGLU ≥ {1 - SUBSTANTIAL:.0%} below ReLU at every K ≥ 10", parts, why="\"substantially improve\" (§1)"))
    ns = sorted(ns)
    if len(ns) > 1 and n == ns[-1]:
        if parts := _parts(records, "mlp-reglu", "mlp-relu", big, ns[0], threshold=EQUIVALENCE_MARGIN, rule=rule, n_b=n):
            out.append(Reading(f"ReGLU at n = {ns[0]:,} within {EQUIVALENCE_MARGIN:g}× of ReLU at n = {n:,}".replace(",", "\u202f"),
                               parts, why="\"improve sample efficiency\": fewer samples for the same error"))
    return out


def readings_gelu(records: Mapping, Ks: Iterable[int], n: int, rule: str = "best") -> list[Reading]:
    """"GELU behaves similarly to ReLU" read one-sided (GELU no worse than 1.25× ReLU) and as the
    qualitative pattern (on ReLU's side of global RFM at every K)."""
    out = []
    if parts := _parts(records, "mlp-gelu", "mlp-relu", sorted(Ks), n, threshold=EQUIVALENCE_MARGIN, rule=rule):
        out.append(Reading(f"GELU no worse than {EQUIVALENCE_MARGIN:g}× ReLU at every K", parts, why="a better GELU is not unlike ReLU"))
    if parts := _same_side(records, sorted(Ks), n, rule):
        out.append(Reading("GELU on ReLU's side of global RFM at every K", parts, why="the same qualitative pattern"))
    return out


def more_claims(records: Mapping, Ks: Iterable[int], ns: Iterable[int], page: str, profile: str, width: int, batch: int,
                rule: str = "best") -> list[Claim]:
    """Section 3.2's claims the findings table leaves unjudged, at the largest n of ``ns``: ReLU
    against global RFM (primary: 20 % lower error at the largest K, "substantially"; beside it,
    any improvement), gating's unevenness at the smallest n, and the title's causal link (a row
    that says what experiment would judge it)."""
    Ks, ns = sorted(Ks), sorted(ns)
    n, K = ns[-1], Ks[-1]
    out = []
    strict = _parts(records, "mlp-relu", RFM, [K], n, threshold=SUBSTANTIAL, rule=rule)
    if strict:
        any_better = Reading("ReLU below global RFM at the largest K", _parts(records, "mlp-relu", RFM, [K], n, rule=rule),
                             why="\"outperforms\" without \"substantially\"")
        out.append(dataclasses.replace(
            Claim.judged(page, MORE_CLAIMS["relu"], strict, f"K = {K}, relu / rfm: {strict[0].mean:.2f}× on the means",
                         profile=profile, width=width, batch=batch, n=n),
            reading=f"ReLU ≥ {1 - SUBSTANTIAL:.0%} below global RFM at the largest K", readings=(any_better,)))
    big = [k for k in Ks if k >= 10]
    pairs = {k: (per_run(records, "mlp-reglu", k, ns[0], rule), per_run(records, "mlp-relu", k, ns[0], rule)) for k in big}
    runs = sorted(set.intersection(*(set(a) & set(b) for a, b in pairs.values()))) if pairs else []
    if runs and len(ns) > 1:
        # the part holds where gating fails at some K: the largest ReGLU / ReLU over K >= 10 is at least 1
        worst = tuple(max(a[r] / b[r] for a, b in pairs.values()) for r in runs)
        mean = max(float(np.mean([a[r] for r in runs])) / float(np.mean([b[r] for r in runs])) for a, b in pairs.values())
        part = Part(f"n = {ns[0]}, largest ReGLU / ReLU over K ≥ 10", mean, worst, low=1.0, closed=True)
        out.append(Claim.judged(page, MORE_CLAIMS["uneven"], [part],
                                f"at n = {ns[0]:,}, the largest ReGLU / ReLU over K ≥ 10: {mean:.2f} on the means "
                                f"({', '.join(f'{v:.2f}' for v in worst)} by run)".replace(",", "\u202f", 1), profile=profile,
                                width=width, batch=batch, n=ns[0]))
    out.append(Claim.judged(page, MORE_CLAIMS["link"], [Part("not judged", None, ())], LINK_EXPERIMENT, profile=profile,
                            width=width, batch=batch, n=n))
    return out
