"""Verdicts that survive the seeds: a claim of the paper judged on the mean over runs *and* run by
run, with one scoring rule for every RFM variant.

The paper averages five runs r = 0..4 and shades one standard deviation (Appendix A.2). A ratio
of means can hide a split between runs, so a claim of the form "A beats B" (the ratio A / B is
below a threshold) is judged twice:

* on the means: mean(A) / mean(B) < threshold;
* paired: the runs in which A_r / B_r < threshold, the two methods having seen the same data.

It **reproduces** when the mean holds and the paired comparison holds in at least
:data:`PAIRED_SHARE` of the runs (4 of 5); it **does not reproduce** when the mean fails and the
paired comparison fails in at least that share; otherwise it is **not settled**. With one run the
paired test is that run, and the verdict says "1 run".

Every RFM variant (global, per-cluster oracle, MLP-gated) records its test MSE at iterations 0-3.
The paper scores global RFM by the best of them (an optimistic envelope that needs the test set)
and is silent for the others: :func:`scored` applies one rule, ``"best"`` or ``"last"``, to all
of them alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

__all__ = ["RFM_RULES", "PAIRED_SHARE", "STATUSES", "scored_iteration", "scored", "per_run", "complete_sizes", "Comparison", "compare", "combine",
           "verdict_table", "best_of", "Claim"]

#: how an RFM variant is scored: the best test MSE of iterations 0-3 (the paper's rule for global
#: RFM) or the last iteration's (a deployable predictor)
RFM_RULES = ("best", "last")
#: the share of runs in which a paired comparison must hold (4 of 5)
PAIRED_SHARE = 0.8
STATUSES = ("reproduces", "not settled", "does not reproduce", "not computed")


def scored_iteration(by_iteration: list[float], rule: str) -> int:
    """The RFM iteration whose test MSE ``rule`` reads (:data:`RFM_RULES`): the best one, or the last."""
    return int(np.argmin(by_iteration)) if rule == "best" else len(by_iteration) - 1


def scored(record: Mapping[str, Any], rule: str = "best", metric: str = "test_mse") -> float | None:
    """The cell's ``metric``; for test MSE of a cell that kept every RFM iteration, the one that
    ``rule`` picks (:data:`RFM_RULES`), whatever the RFM variant."""
    if rule not in RFM_RULES:
        raise ValueError(f"rule={rule!r} is not an RFM scoring rule; use one of {list(RFM_RULES)}")
    m = record["metrics"]
    by_iteration = m.get("test_mse_by_iteration") if metric == "test_mse" else None
    if by_iteration:
        return float(by_iteration[scored_iteration(by_iteration, rule)])
    value = m.get(metric)
    return None if value is None else float(value)


def per_run(records: Mapping, method: str, K: int, n: int, rule: str = "best", metric: str = "test_mse") -> dict[int, float]:
    """``{run: score}`` of ``method`` at ``(K, n)`` over the runs present in ``records``."""
    out = {}
    for job, rec in records.items():
        if job.method == method and job.K == K and job.n == n:
            v = scored(rec, rule, metric)
            if v is not None:
                out[job.run] = v
    return dict(sorted(out.items()))


def complete_sizes(records: Mapping, methods: Iterable[str], Ks: Iterable[int], ns: Iterable[int]) -> list[int]:
    """The training sizes of ``ns`` at which ``records`` hold a cell of every method at every K
    (of any run): where a verdict over those methods can be judged."""
    have = {(j.method, j.K, j.n) for j in records}
    methods, Ks = list(methods), list(Ks)
    return [n for n in ns if all((m, K, n) in have for m in methods for K in Ks)]


def best_of(records: Mapping, methods: Iterable[str], K: int, n: int, rule: str = "best") -> str | None:
    """Of ``methods``, the one with the lowest mean score at ``(K, n)`` (``None`` if none ran)."""
    means = {m: float(np.mean(list(v.values()))) for m in methods if (v := per_run(records, m, K, n, rule))}
    return min(means, key=means.get) if means else None


@dataclass(frozen=True)
class Comparison:
    """The claim "``a`` beats ``b`` at (K, n)": ``a / b < threshold``, on the means and run by run."""

    claim: str
    a: str
    b: str
    K: int
    n: int
    threshold: float
    mean_a: float
    mean_b: float
    ratios: tuple[tuple[int, float], ...]  # (run, a_r / b_r) over the runs both ran

    @property
    def runs(self) -> int:
        return len(self.ratios)

    @property
    def mean_ratio(self) -> float:
        return self.mean_a / self.mean_b

    @property
    def holds_mean(self) -> bool:
        return self.mean_ratio < self.threshold

    @property
    def wins(self) -> int:
        """The runs in which the claim holds."""
        return sum(r < self.threshold for _, r in self.ratios)

    @property
    def needed(self) -> int:
        return math.ceil(PAIRED_SHARE * self.runs)

    @property
    def status(self) -> str:
        if self.runs == 0:
            return "not computed"
        if self.holds_mean and self.wins >= self.needed:
            return "reproduces"
        if not self.holds_mean and self.runs - self.wins >= self.needed:
            return "does not reproduce"
        return "not settled"

    @property
    def evidence(self) -> str:
        """The numbers behind the status, in one line."""
        if self.runs == 0:
            return "no run"
        per = ", ".join(f"{r:.2f}" for _, r in self.ratios)
        return (f"{self.mean_ratio:.2f}x on the means; holds in {self.wins} of {self.runs} run"
                f"{'s' if self.runs > 1 else ''} ({per})")


def compare(records: Mapping, claim: str, a: str, b: str, K: int, n: int, *, threshold: float = 1.0,
            rule: str = "best") -> Comparison:
    """Judge "``a`` / ``b`` < ``threshold`` at (K, n)" on ``records`` (``{job: record}``), both
    methods scored by ``rule``."""
    ra, rb = per_run(records, a, K, n, rule), per_run(records, b, K, n, rule)
    both = sorted(set(ra) & set(rb))
    nan = float("nan")
    return Comparison(claim, a, b, K, n, threshold,
                      float(np.mean([ra[r] for r in both])) if both else nan,
                      float(np.mean([rb[r] for r in both])) if both else nan,
                      tuple((r, ra[r] / rb[r]) for r in both))


def combine(parts: Iterable[Comparison]) -> str:
    """The status of a claim that must hold in every part (e.g. "at every K"): it reproduces when
    every part does, does not when any part does not, and is otherwise not settled."""
    statuses = [p.status for p in parts]
    if not statuses or "not computed" in statuses:
        return "not computed"
    if all(s == "reproduces" for s in statuses):
        return "reproduces"
    if "does not reproduce" in statuses:
        return "does not reproduce"
    return "not settled"


def verdict_table(parts: Iterable[Comparison]) -> pd.DataFrame:
    """One row per comparison: the claim, the means, the ratio of means, the per-run ratios and
    the status."""
    rows = []
    for c in parts:
        rows.append({"claim": c.claim, "K": c.K, "n": c.n, "A": c.a, "B": c.b,
                     "mean A": c.mean_a, "mean B": c.mean_b, "A / B (means)": c.mean_ratio, "threshold": c.threshold,
                     "runs": c.runs, "holds in": c.wins,
                     "A / B per run": ", ".join(f"r{r}: {x:.2f}" for r, x in c.ratios), "verdict": c.status})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Claim:
    """One claim of the paper as a page judges it at one scale: the row of the page's verdict box
    and of the status page."""

    page: str  # the notebook's name, e.g. "04_sample_efficiency"
    claim: str  # the paper's claim in one line
    scale: str  # the profile (and size) it was judged at, e.g. "long, n = 50 000"
    verdict: str  # one of :data:`STATUSES`
    evidence: str  # the numbers behind the verdict
