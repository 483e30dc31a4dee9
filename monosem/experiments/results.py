"""Aggregate cached job results into the numbers a figure shows: mean and std over runs."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import pandas as pd

from ..tables import span, thousands
from .cache import Job
from .verdicts import RFM_RULES, scored, scored_iteration

__all__ = ["Point", "aggregate", "curve_table", "eigenpro_solves", "eigenpro_solves_frame", "lookup",
           "mean_over_median", "GAUSSIAN_MEAN_OVER_MEDIAN",
           "unreached_numbers", "unreached_solves", "verdict", "with_spread"]


@dataclass(frozen=True)
class Point:
    """One point of a curve: the cells of ``method`` at ``(K, n)``, pooled over ``runs`` runs; ``capped`` of them
    (networks) stopped at the update cap, under-trained by Appendix A.2's own rule."""

    method: str
    K: int
    n: int
    runs: int
    mean: float
    std: float
    median: float
    capped: int = 0
    #: geometric mean and geometric standard deviation over runs (a factor >= 1), the centre and
    #: the ×/÷ band of a curve on a log axis; NaN where a value is not positive
    gmean: float = float("nan")
    gstd: float = 1.0


def aggregate(records: dict[Job, dict], metric: str = "test_mse", rule: str = "best") -> list[Point]:
    """Mean, empirical standard deviation (ddof=1 when there are >= 2 runs, as the paper's shaded
    bands) and median of ``metric`` over runs, per (method, K, n); the test MSE of every RFM
    variant scored by ``rule`` (:func:`~.verdicts.scored`)."""
    groups: dict[tuple[str, int, int], list[float]] = defaultdict(list)
    capped: dict[tuple[str, int, int], int] = defaultdict(int)
    for job, rec in records.items():
        value = scored(rec, rule, metric)
        if value is not None:
            groups[(job.method, job.K, job.n)].append(float(value))
            capped[(job.method, job.K, job.n)] += rec["metrics"].get("stop_reason") == "cap"
    points = []
    for (method, K, n), vals in sorted(groups.items()):
        v = np.asarray(vals)
        logs = np.log(v) if np.all(v > 0) else None
        gmean = float(np.exp(logs.mean())) if logs is not None else float("nan")
        gstd = float(np.exp(logs.std(ddof=1))) if logs is not None and len(v) > 1 else 1.0
        points.append(Point(method, K, n, len(v), float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0, float(np.median(v)),
                          gmean=gmean, gstd=gstd, capped=capped[(method, K, n)]))
    return points


def lookup(points: Iterable[Point], method: str, K: int, n: int) -> Point | None:
    """The point of ``method`` at ``(K, n)``, or ``None``."""
    return next((c for c in points if c.method == method and c.K == K and c.n == n), None)


def verdict(ok: bool | None) -> str:
    """How a page reports a check of a paper's claim at the current profile."""
    return "not computed" if ok is None else ("reproduces" if ok else "does NOT reproduce")


def curve_table(records: dict[Job, dict], methods: Iterable[str] | None = None, metric: str = "test_mse",
                rule: str = "best") -> pd.DataFrame:
    """The numbers behind a figure's curves: one row per (K, n), per method the mean and std of
    ``metric`` over runs (std empty for one run, and left out when no cell has more), for a
    network the runs that stopped at the update cap (left out when none did), and the number of
    runs; every RFM variant scored by ``rule``."""
    points = aggregate(records, metric, rule)
    methods = list(methods) if methods is not None else sorted({c.method for c in points})
    by = {(c.method, c.K, c.n): c for c in points}
    rows = {}
    for K, n in sorted({(c.K, c.n) for c in points if c.method in methods}):
        row = {}
        for m in methods:
            c = by.get((m, K, n))
            row[(m, "mean")] = c.mean if c else float("nan")
            row[(m, "std")] = c.std if c and c.runs > 1 else float("nan")
            if c is not None and c.capped:
                row[(m, "at cap")] = c.capped
        row[("", "runs")] = max((by[(m, K, n)].runs for m in methods if (m, K, n) in by), default=0)
        rows[(K, n)] = row
    frame = pd.DataFrame.from_dict(rows, orient="index")
    if not frame.empty:
        frame.index.names = ["K", "n"]
        frame.columns = pd.MultiIndex.from_tuples(frame.columns)
        if frame[("", "runs")].max() <= 1:  # one run everywhere: no spread to show
            frame = frame.drop(columns=[c for c in frame.columns if c[1] == "std"])
        capped = [c for c in frame.columns if c[1] == "at cap"]
        frame[capped] = frame[capped].fillna(0).astype(int)
    return frame


def with_spread(frame: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """A :func:`curve_table` for reading at page width: per method one column ``mean ± std`` (the
    std left out where a cell has one run; "(k at cap)" where k of a network's runs stopped at the
    update cap, under-trained), ``digits`` significant digits, and the runs. The numbers
    themselves stay in :func:`curve_table` (and its CSV export)."""
    if frame.empty:
        return frame
    out = {}
    for method in dict.fromkeys(m for m, _ in frame.columns if m):
        mean = frame[(method, "mean")]
        std = frame[(method, "std")] if (method, "std") in frame.columns else pd.Series(np.nan, index=frame.index)
        capped = frame[(method, "at cap")] if (method, "at cap") in frame.columns else pd.Series(0, index=frame.index)
        out[method] = [("-" if np.isnan(m) else f"{m:.{digits}g}" + ("" if np.isnan(s) else f" ± {s:.{digits - 1}g}")
                        + (f" ({k} at cap)" if k else ""))
                       for m, s, k in zip(mean, std, capped)]
    out["runs"] = list(frame[("", "runs")])
    return pd.DataFrame(out, index=frame.index)


def _rules_scoring(by_iteration: list | None, t: int | None) -> str:
    """Which RFM scoring rules (:data:`~.verdicts.RFM_RULES`) score the fit of iteration ``t``
    (``None``: a cell's only fit, scored by both)."""
    if t is None or not by_iteration:
        return "best, last"
    return ", ".join(r for r in RFM_RULES if scored_iteration(by_iteration, r) == t) or "neither"


def eigenpro_solves(records: dict[Job, dict]) -> list[dict[str, Any]]:
    """One row per EigenPro solve recorded in kernel cells: a global Laplace cell's one solve, a
    global RFM cell's one per iteration, and an oracle's or gated predictor's per cluster (gate)
    ``local_solves``: its cell (method, K, n, run), epochs, step halvings, final training MSE,
    whether it reached the target, the cell's test MSE with that fit (for an RFM iteration, that
    iteration's), the best test MSE of the cell's other iterations (an RFM iteration only) and the
    scoring rules that read that test MSE. Cells recorded before the solves were kept have none."""
    rows = []
    for job, rec in sorted(records.items(), key=lambda kv: (kv[0].method, kv[0].K, kv[0].n, kv[0].run)):
        m = rec["metrics"]
        by_iteration = m.get("test_mse_by_iteration")
        # (cluster or None for a global fit, its solves, whether they are RFM iterations)
        fits: list[tuple[int | None, list, bool]] = [(None, [m["solve"]], False) if "solve" in m else (None, m.get("solves", []), True)]
        fits += [(k, s if isinstance(s, list) else [s], isinstance(s, list))
                 for k, s in enumerate(m.get("local_solves", [])) if s is not None]
        for cluster, solves, iterations in fits:
            for t, s in enumerate(solves):
                if s["solver"] != "eigenpro":
                    continue
                it = t if iterations else None
                test = by_iteration[t] if it is not None and by_iteration else m.get("test_mse")
                others = [v for u, v in enumerate(by_iteration or []) if u != it] if it is not None else []
                rows.append({"method": job.method, "K": job.K, "n": job.n, "run": job.run, "cluster": cluster,
                             "iteration": it, "test_mse": test, "best_other_test_mse": min(others) if others else None,
                             "scored_by": _rules_scoring(by_iteration, it), **s})
    return rows


def eigenpro_solves_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """:func:`eigenpro_solves` as a table: one row per solve, its cell (method, K, n, run), cluster
    and RFM iteration (none for a global fit or a single solve), epochs, step halvings, final
    training MSE, whether it reached the target, the cell's test MSE with it, the best test MSE of
    the cell's other RFM iterations and the rules that score the test MSE with it."""
    columns = ["method", "K", "n", "run", "cluster", "iteration", "epochs", "step halvings", "training MSE",
               "reached the target", "test MSE with it", "best other iteration", "scored by"]
    frame = pd.DataFrame([[r["method"], r["K"], r["n"], r["run"], r.get("cluster"), r["iteration"], r["iterations"],
                           r["step_halvings"], r["train_mse"], bool(r["converged"]), r.get("test_mse"),
                           r.get("best_other_test_mse"), r["scored_by"]]
                          for r in rows], columns=columns)
    return frame.astype({"K": int, "n": int, "run": int, "cluster": "Int64", "iteration": "Int64", "epochs": int,
                         "step halvings": int, "training MSE": float, "reached the target": bool, "test MSE with it": float,
                         "best other iteration": float})


#: the mean squared error over the median squared error of a Gaussian error: 1 / (the median of
#: chi-squared with one degree of freedom); a heavier tail gives a larger ratio
GAUSSIAN_MEAN_OVER_MEDIAN = 2.198109338317736


def mean_over_median(pairs: Iterable[tuple[float, float]]) -> str:
    """How heavy-tailed a test error is, in words: the range, over cells, of the mean squared
    error over the median squared error (:data:`GAUSSIAN_MEAN_OVER_MEDIAN` for a Gaussian error;
    a mean far above that is carried by a few large errors). ``pairs``: (mean, median) per cell."""
    ratios = [m / d for m, d in pairs if d and d > 0 and m is not None]
    return span(ratios, lambda v: f"{v:.2g}" if v < 10 else f"{v:.0f}", "\u00d7", "not computed")


def unreached_solves(solves: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``solves`` (an :func:`eigenpro_solves_frame`) whose EigenPro solve stopped at
    the epoch limit short of the training target, indexed by their cell (method, K, n, run)."""
    return solves[~solves["reached the target"]].drop(columns="reached the target").set_index(["method", "K", "n", "run"])


def unreached_numbers(solves: pd.DataFrame) -> dict[str, str]:
    """The numbers a page quotes of :func:`unreached_solves` of ``solves`` (an
    :func:`eigenpro_solves_frame`): how many EigenPro solves missed the target, of how many, at
    which training sizes, how many of those fits each scoring rule reads, the range of their step
    halvings, and the RFM iteration whose test MSE stands furthest above the best of its cell's
    other iterations."""
    missed = unreached_solves(solves).reset_index()
    by_rule = {rule: int(missed["scored by"].str.contains(rule).sum()) for rule in RFM_RULES}
    worst, top = "none", 0.0
    for _, w in missed[missed["best other iteration"].notna()].iterrows():
        if w["test MSE with it"] / w["best other iteration"] > top:
            top = w["test MSE with it"] / w["best other iteration"]
            worst = (f"{w['test MSE with it']:.2g} ({w['method']}, K = {w['K']}, n = {thousands(w['n'])}, run {w['run']}, "
                     f"iteration {w['iteration']}; {w['best other iteration']:.2g} at the best of its other iterations)")
    return {"ep_missed": str(len(missed)), "ep_solves": str(len(solves)), "ep_worst": worst,
            "ep_missed_ns": ", ".join(thousands(n) for n in sorted(set(missed["n"]))) or "none",
            "ep_missed_best": str(by_rule["best"]), "ep_missed_last": str(by_rule["last"]),
            "ep_halvings": span(missed["step halvings"], empty="none")}
