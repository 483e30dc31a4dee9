"""Verdicts that survive the seeds: a claim of the paper judged on the mean over runs *and* run by
run, with one scoring rule for every RFM variant.

The paper averages five runs r = 0..4 and shades one standard deviation (Appendix A.2). A ratio
of means can hide a split between runs, so a claim of the form "A beats B" (the ratio A / B is
below a threshold) is judged twice:

* on the means: mean(A) / mean(B) < threshold;
* paired: the runs in which A_r / B_r < threshold, the two methods having seen the same data.

One rule (:func:`judge`) turns these two readings into a status, for every claim of the book
(the comparisons of Sections 3.2-3.3, the Figure 1 rows judged per seed, the theory's
simulations):

* **reproduces**: the mean holds and the claim holds in at least :data:`PAIRED_SHARE` of the runs
  (4 of 5), on at least :data:`MIN_RUNS` runs;
* **indicated**: the same, on fewer than :data:`MIN_RUNS` runs; shown as "indicated (N runs)", the
  most a claim can get on fewer runs than the paper averages;
* **does not reproduce**: the mean fails and the claim fails in at least that share of the runs,
  on at least :data:`MIN_RUNS` runs. A negative result on fewer runs is **not settled**: it is no
  more than a sign against, and the evidence says so ("its runs say against, on fewer than 5 runs");
* **not settled**: anything between;
* **not computed**: no run.

A claim that must hold in several parts (at every K) takes the weakest of its parts'
statuses (:func:`combine`). A symbolic check involves no sampling: its part is *exact* and
reproduces or not by itself. "Similar" claims hold inside an equivalence margin
(:data:`EQUIVALENCE_MARGIN`), stated beside the verdict.

Every RFM variant (global, per-cluster oracle, MLP-gated) records its test MSE at iterations 0-3.
The paper scores global RFM by the best of them (an optimistic envelope that needs the test set)
and is silent for the others: :func:`scored` applies one rule, ``"best"`` or ``"last"``, to all
of them alike.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from ..tables import count, span, thousands

__all__ = ["RFM_RULES", "PAIRED_SHARE", "MIN_RUNS", "EQUIVALENCE_MARGIN", "STATUSES", "SCALE_FIELDS", "judge", "against_note", "verdict_label",
           "rule_text", "scored_iteration", "scored", "per_run", "complete_sizes", "Comparison", "compare", "combine_statuses",
           "combine", "verdict_table", "best_of", "Part", "combine_parts", "Reading", "Claim", "claim_problems"]

#: how an RFM variant is scored: the best test MSE of iterations 0-3 (the paper's rule for global
#: RFM) or the last iteration's (a deployable predictor)
RFM_RULES = ("best", "last")
#: the share of runs in which a paired comparison must hold (4 of 5)
PAIRED_SHARE = 0.8
#: the fewest runs (or seeds) on which a claim can reproduce, or not: the paper averages five
MIN_RUNS = 5
#: "A behaves similarly to B": the ratio A / B within this factor either way (1 / 1.25 to 1.25)
EQUIVALENCE_MARGIN = 1.25
#: the verdicts, strongest first
STATUSES = ("reproduces", "indicated", "not settled", "does not reproduce", "not computed")


def judge(holds_mean: bool | None, held: Iterable[bool]) -> str:
    """The one rule (:data:`STATUSES`): the status of a claim from whether it holds on the mean
    over runs and in each run. It reproduces only on at least :data:`MIN_RUNS` runs with the mean
    and :data:`PAIRED_SHARE` of them holding; the same on fewer runs is "indicated"; a negative
    result needs as many runs, else it is "not settled"."""
    held = [bool(h) for h in held]
    runs, wins = len(held), sum(held)
    if runs == 0 or holds_mean is None:
        return "not computed"
    needed = math.ceil(PAIRED_SHARE * runs)
    if holds_mean and wins >= needed:
        return "reproduces" if runs >= MIN_RUNS else "indicated"
    if not holds_mean and runs - wins >= needed and runs >= MIN_RUNS:
        return "does not reproduce"
    return "not settled"


def against_note(holds_mean: bool | None, held: Iterable[bool], unit: str = "run") -> str:
    """The evidence's note on a negative result that :func:`judge` leaves "not settled" for want of
    runs ("; its runs say against, on fewer than 5 runs"); empty otherwise."""
    held = [bool(h) for h in held]
    if holds_mean is False and held and judge(holds_mean, held) == "not settled" \
            and len(held) - sum(held) >= math.ceil(PAIRED_SHARE * len(held)):
        return f"; its {unit}s say against, on fewer than {MIN_RUNS} {unit}s"
    return ""


def verdict_label(verdict: str, runs: int, unit: str = "run") -> str:
    """The verdict as a box prints it: an indicated claim names its runs ("indicated (1 run)")."""
    if verdict == "indicated":
        return f"indicated ({count(runs, unit)})"
    return verdict


def rule_text() -> str:
    """The rule in one paragraph, printed under every verdict box."""
    need = math.ceil(PAIRED_SHARE * MIN_RUNS)
    return (f"*Reproduces*: holds on the mean over runs and in at least {need} of {MIN_RUNS} runs (or seeds); "
            f"*indicated (N runs)*: the same on fewer than {MIN_RUNS} runs, the most fewer runs can show; "
            f"*does not reproduce*: fails on the mean and in at least {need} of {MIN_RUNS} runs; a negative result "
            f"on fewer than {MIN_RUNS} runs is *not settled*, and its numbers say \"against\"; *not settled*: anything "
            f"between; a claim over several K takes its weakest part. Symbolic checks are exact. "
            f"\"Similar\" means a ratio within {EQUIVALENCE_MARGIN:g}× either way.")


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
    """Of ``methods``, the one with the lowest mean score at ``(K, n)`` (``None`` if none ran).

    Like with like: the means are taken over the runs every method that ran shares (a method
    with five runs is not ranked against another's single run by a mean over other data); only
    where they share no run does each mean cover its own runs."""
    scores = {m: v for m in methods if (v := per_run(records, m, K, n, rule))}
    if not scores:
        return None
    shared = set.intersection(*(set(v) for v in scores.values()))
    means = {m: float(np.mean([v[r] for r in (shared or v)])) for m, v in scores.items()}
    return min(means, key=means.get)


@dataclass(frozen=True)
class Comparison:
    """The claim "``a`` beats ``b`` at (K, n)": ``a / b < threshold``, on the means and run by run;
    with ``lower`` > 0, "``a`` behaves like ``b``": ``lower < a / b < threshold``."""

    claim: str
    a: str
    b: str
    K: int
    n: int
    threshold: float
    mean_a: float
    mean_b: float
    ratios: tuple[tuple[int, float], ...]  # (run, a_r / b_r) over the runs both ran
    lower: float = 0.0  # an equivalence claim's lower bound on the ratio (0: a one-sided claim)

    def holds(self, ratio: float) -> bool:
        """Whether the claim holds at ``ratio``."""
        return self.lower < ratio < self.threshold

    @property
    def runs(self) -> int:
        return len(self.ratios)

    @property
    def mean_ratio(self) -> float:
        return self.mean_a / self.mean_b

    @property
    def holds_mean(self) -> bool:
        return self.holds(self.mean_ratio)

    @property
    def wins(self) -> int:
        """The runs in which the claim holds."""
        return sum(self.holds(r) for _, r in self.ratios)

    @property
    def needed(self) -> int:
        return math.ceil(PAIRED_SHARE * self.runs)

    @property
    def status(self) -> str:
        """The one rule (:func:`judge`) on this comparison."""
        return judge(self.holds_mean if self.runs else None, [self.holds(r) for _, r in self.ratios])

    @property
    def evidence(self) -> str:
        """The numbers behind the status, in one line."""
        if self.runs == 0:
            return "no run"
        per = ", ".join(f"{r:.2f}" for _, r in self.ratios)
        bound = f" (within {span([self.lower, self.threshold], '.3g', '×')})" if self.lower > 0 else ""
        against = against_note(self.holds_mean, [self.holds(r) for _, r in self.ratios])
        return (f"{self.mean_ratio:.2f}× on the means{bound}; holds in {self.wins} of "
                f"{count(self.runs, 'run')} ({per}){against}")

    def part(self, label: str | None = None) -> "Part":
        """This comparison as a :class:`Part` of a claim: the ratio of means, the ratio per run and
        the bounds inside which the claim holds."""
        return Part(label if label is not None else f"K = {self.K}", self.mean_ratio if self.runs else None,
                    tuple(r for _, r in self.ratios), low=self.lower, high=self.threshold)


def compare(records: Mapping, claim: str, a: str, b: str, K: int, n: int, *, threshold: float = 1.0,
            rule: str = "best", lower: float = 0.0) -> Comparison:
    """Judge "``a`` / ``b`` < ``threshold`` at (K, n)" (with ``lower``: ``lower < a / b <
    threshold``, an equivalence) on ``records`` (``{job: record}``), both methods scored by
    ``rule``."""
    ra, rb = per_run(records, a, K, n, rule), per_run(records, b, K, n, rule)
    both = sorted(set(ra) & set(rb))
    nan = float("nan")
    return Comparison(claim, a, b, K, n, threshold,
                      float(np.mean([ra[r] for r in both])) if both else nan,
                      float(np.mean([rb[r] for r in both])) if both else nan,
                      tuple((r, ra[r] / rb[r]) for r in both), lower)


def combine_statuses(statuses: Iterable[str]) -> str:
    """The status of a claim that must hold in every part (e.g. "at every K"): not computed when a
    part is; else it reproduces when every part does, is indicated when every part reproduces or
    is indicated, does not reproduce when a part does not, and is otherwise not settled."""
    statuses = list(statuses)
    if not statuses or "not computed" in statuses:
        return "not computed"
    if all(s == "reproduces" for s in statuses):
        return "reproduces"
    if all(s in ("reproduces", "indicated") for s in statuses):
        return "indicated"
    if "does not reproduce" in statuses:
        return "does not reproduce"
    return "not settled"


def combine(parts: Iterable[Comparison]) -> str:
    """:func:`combine_statuses` over comparisons."""
    return combine_statuses(p.status for p in parts)


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
class Part:
    """One part of a claim (the claim at one K, or one Figure 1 row), as the numbers the rule reads:
    a statistic on the means over runs and the same statistic run by run. The part holds where the
    statistic lies between ``low`` and ``high`` (bounds included when ``closed``). An ``exact``
    part (a symbolic check) has no runs: it holds or not by its ``mean`` alone."""

    label: str  # e.g. "K = 50", "A ≥ .71 / .90 miss"
    mean: float | None  # the statistic on the means (None: not computed)
    values: tuple[float, ...]  # the statistic in each run (or seed)
    low: float = -math.inf
    high: float = math.inf
    closed: bool = False
    exact: bool = False

    def holds(self, value: float) -> bool:
        """Whether the part holds at ``value``."""
        return self.low <= value <= self.high if self.closed else self.low < value < self.high

    @property
    def status(self) -> str:
        """The one rule (:func:`judge`) on this part; an exact part reproduces when its mean holds."""
        if self.mean is None:
            return "not computed"
        if self.exact:
            return "reproduces" if self.holds(self.mean) else "does not reproduce"
        return judge(self.holds(self.mean), [self.holds(v) for v in self.values])


def combine_parts(parts: Iterable[Part]) -> str:
    """The status of a claim from its parts (:func:`combine_statuses`)."""
    return combine_statuses(p.status for p in parts)


@dataclass(frozen=True)
class Reading:
    """One operationalization of a claim's words, judged by the one rule on its own parts: its
    ``name`` (with its threshold, a named constant of the module that reads the claim) and what
    it reads in the paper's words (``why``)."""

    name: str
    parts: tuple[Part, ...]
    why: str = ""

    @property
    def verdict(self) -> str:
        """The one rule on this reading's parts (:func:`combine_parts`)."""
        return combine_parts(self.parts)

    @property
    def runs(self) -> int:
        """The runs its verdict rests on: the fewest of its parts'."""
        return min((len(p.values) for p in self.parts), default=0)

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> "Reading":
        parts = tuple(Part(**{**p, "values": tuple(p["values"])}) for p in row.get("parts", ()))
        return cls(row["name"], parts, row.get("why", ""))


#: the fields that name a claim's scale: every claim row carries each of them
SCALE_FIELDS = ("profile", "width", "batch", "n", "runs")


@dataclass(frozen=True)
class Claim:
    """One claim of the paper as a page judges it at one scale: the row of the page's verdict box
    and of the status page. Its scale is named by :data:`SCALE_FIELDS`: the profile, the networks'
    width and batch, the training size and the runs (or seeds) each part rests on; a knob that does
    not apply says so in words (a kernel-only claim has width "no network"). ``parts`` keep the
    per-run numbers the verdict is computed from, so that it can be recomputed
    (:meth:`recomputed`)."""

    page: str  # the notebook's name, e.g. "04_sample_efficiency"
    claim: str  # the paper's claim in one line
    verdict: str  # one of :data:`STATUSES`, :func:`combine_parts` of ``parts``
    evidence: str  # the numbers behind the verdict
    profile: str  # "cpu", "long (recorded)", "paper (recorded)", "symbolic"
    width: int | str  # the hidden width of the networks
    batch: int | str  # their batch size
    n: int | str  # the training size (or the grid of sizes)
    runs: int  # the runs (or seeds) behind the verdict: the fewest over its parts; 0 for exact checks
    parts: tuple[Part, ...] = ()
    unit: str = "run"  # what a run is called: "run" or "seed"
    detail: str = ""  # what else the scale needs to be read (a recorded reading's name)
    reading: str = ""  # the primary reading of the paper's words that ``parts`` judge ("": the claim's one)
    readings: tuple[Reading, ...] = ()  # the other readings, judged beside it

    @property
    def agreeing(self) -> int:
        """How many of the other readings give the primary's verdict."""
        return sum(r.verdict == self.verdict for r in self.readings)

    @property
    def depends_on_reading(self) -> bool:
        """Whether another reading of the paper's words gives another verdict."""
        return self.agreeing < len(self.readings)

    @property
    def readings_note(self) -> str:
        """The other readings in a few words: "(3 of 3 readings agree)", or the first that
        dissents and its verdict; "" for a claim with one reading."""
        if not self.readings:
            return ""
        total = len(self.readings) + 1
        if not self.depends_on_reading:
            return f"({total} of {total} readings agree)"
        other = next(r for r in self.readings if r.verdict != self.verdict)
        return (f"({self.agreeing + 1} of {total} readings agree; "
                f"{other.name}: {verdict_label(other.verdict, other.runs, self.unit)})")

    @classmethod
    def judged(cls, page: str, claim: str, parts: Iterable[Part], evidence: str, *, profile: str, width: int | str,
               batch: int | str, n: int | str, unit: str = "run", detail: str = "") -> "Claim":
        """The claim whose verdict is the rule's on ``parts`` and whose runs are the fewest of
        theirs."""
        parts = tuple(parts)
        sampled = [len(p.values) for p in parts if not p.exact]
        return cls(page, claim, combine_parts(parts), evidence, profile, width, batch, n, min(sampled, default=0), parts,
                   unit, detail)

    @property
    def label(self) -> str:
        """The verdict as the box prints it (:func:`verdict_label`)."""
        return verdict_label(self.verdict, self.runs, self.unit)

    @property
    def scale(self) -> str:
        """The scale in words: profile, width, batch, n, runs."""
        words = [self.profile]
        words += [f"width {thousands(self.width)}" if isinstance(self.width, int) else str(self.width)]
        if isinstance(self.batch, int) or self.batch != self.width:  # "no network" once, not twice
            words += [f"batch {thousands(self.batch)}" if isinstance(self.batch, int) else str(self.batch)]
        words += [f"n = {thousands(self.n)}" if isinstance(self.n, int) else str(self.n)]
        exact = bool(self.parts) and all(p.exact for p in self.parts)
        words += [count(self.runs, self.unit) if self.runs else "exact" if exact else "no run"]
        return ", ".join(words + ([self.detail] if self.detail else []))

    def recomputed(self) -> str:
        """The verdict recomputed from the parts' per-run numbers under the one rule."""
        return combine_parts(self.parts)

    def to_json(self) -> dict[str, Any]:
        """The row as a page publishes it: the fields, and the scale and verdict as printed."""
        return asdict(self) | {"scale": self.scale, "label": self.label,
                               "readings": [asdict(r) | {"verdict": r.verdict} for r in self.readings]}

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> "Claim":
        """The claim of a published row (:meth:`to_json`)."""
        kept = {f.name: row[f.name] for f in fields(cls) if f.name in row}
        kept["parts"] = tuple(Part(**{**p, "values": tuple(p["values"])}) for p in kept.get("parts", ()))
        if isinstance(kept.get("readings"), (list, tuple)):
            kept["readings"] = tuple(Reading.from_json(r) for r in kept["readings"])
        else:  # a row without readings (a CSV's empty cell)
            kept.pop("readings", None)
        if not isinstance(kept.get("reading", ""), str):
            kept.pop("reading")
        return cls(**kept)


def claim_problems(row: Mapping[str, Any]) -> list[str]:
    """What is wrong with one published claim row (:meth:`Claim.to_json`) under the one rule; empty
    when nothing is: a scale field (:data:`SCALE_FIELDS`) missing or empty, a verdict outside
    :data:`STATUSES`, a verdict other than the one recomputed from the per-run numbers of its
    parts, a runs count other than the fewest runs of its parts, or a "reproduces" on fewer than
    :data:`MIN_RUNS` runs (only an all-exact claim, a symbolic check, reproduces without runs)."""
    name = f"{row.get('page', '?')}: {row.get('claim', '?')!r} ({row.get('profile', '?')})"
    problems = [f"{name}: no {key} in its scale" for key in SCALE_FIELDS if row.get(key) is None or row.get(key) == ""]
    if problems:
        return problems
    if row.get("verdict") not in STATUSES:
        return [f"{name}: verdict {row.get('verdict')!r} is not one of {STATUSES}"]
    try:
        claim = Claim.from_json(row)
    except (KeyError, TypeError) as err:
        return [f"{name}: not a claim row ({err})"]
    if not claim.parts:
        return [f"{name}: no per-run numbers to recompute its verdict from"]
    if claim.recomputed() != claim.verdict:
        problems.append(f"{name}: verdict {claim.verdict!r}, but its numbers give {claim.recomputed()!r}")
    for stored, reading in zip(row.get("readings") or (), claim.readings):
        if isinstance(stored, Mapping) and stored.get("verdict") not in (None, reading.verdict):
            problems.append(f"{name}: reading {reading.name!r} says {stored['verdict']!r}, its numbers give {reading.verdict!r}")
    sampled = [len(p.values) for p in claim.parts if not p.exact]
    if claim.runs != min(sampled, default=0):
        problems.append(f"{name}: says {count(claim.runs, 'run')}, its parts have {sampled}")
    if claim.verdict == "reproduces":
        if sampled and min(sampled) < MIN_RUNS:
            problems.append(f"{name}: reproduces on {count(min(sampled), 'run')} (needs {MIN_RUNS})")
        for p in claim.parts:
            held = sum(p.holds(v) for v in p.values)
            if not p.exact and held < math.ceil(PAIRED_SHARE * MIN_RUNS):
                problems.append(f"{name}: reproduces with {p.label} holding in {count(held, 'run')}")
    return problems


