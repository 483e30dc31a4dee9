"""The Section 3.2 page's computations: the paper's two findings judged on a grid of cells, and how
every MLP cell stopped.

The same functions judge the live profile and the recorded ``long`` run, so the two verdicts on
the page come from one definition:

* finding 1a: at the largest K, the best MLP beats global RFM;
* finding 1b: at the largest K, the best MLP is within 2x of the better oracle;
* finding 2: ReGLU beats ReLU at every K >= 10 (and SwiGLU beats GELU, where both ran);
* Figure 6, "GELU behaves similarly to ReLU": GELU / ReLU within the equivalence margin
  (:data:`~..verdicts.EQUIVALENCE_MARGIN`) at every K;
* Figure 6, "SwiGLU gives the lowest MLP errors for K = 10 and 50 with sufficient samples": at
  the largest n, SwiGLU beats each of the other three networks at K = 10 and 50.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from ...profiles import Profile, SampleEfficiencySizes
from ...tables import span
from ...train import cosine_lr
from ..estimate import remaining_seconds
from ..recorded import load_recorded_cells
from ..results import curve_table, with_spread
from ..sweeps import Figure, register_figure, sweep
from ..verdicts import EQUIVALENCE_MARGIN, RFM_RULES, complete_sizes, Claim, Comparison, Part, best_of, combine, compare, per_run
from ..families.kernels import LAPLACE, ORACLE_LAPLACE, ORACLE_RFM, RFM
from ..families.networks import MLP_GELU, MLP_REGLU, MLP_RELU, MLP_SWIGLU
from ..families.bayes import BAYES
from ..estimate import DeviceModel, kernel_fit_seconds, mlp_update_seconds
from ..registry import register_cost
from ..specs import MIXED_LINK_D

__all__ = ["MLPS", "FIGURE2_MLPS", "ORACLES", "CLAIMS", "Findings", "findings", "findings_table", "claims", "stopping_summary", "stopping_frame",
           "NETWORK_COLUMNS", "KERNEL_COLUMNS", "curve_frames", "stopping_note",
           "recorded_long", "recorded_runs_note", "findings_by_size", "rules_frame", "long_numbers", "rate_at_stop",
           "oracle_solves_numbers"]

MLPS = (MLP_RELU, MLP_GELU, MLP_REGLU, MLP_SWIGLU)
#: the networks of Figure 2, whose findings 1a and 1b are: "the best MLP" is the better of these
#: (Figure 6's GELU and SwiGLU have their own finding, 2'; at the long profile they ran once)
FIGURE2_MLPS = (MLP_RELU, MLP_REGLU)
ORACLES = (ORACLE_RFM, ORACLE_LAPLACE)
#: finding 1b: "close to the oracles", read as within this factor of the better one
ORACLE_FACTOR = 2.0
#: Figure 6's "SwiGLU gives the lowest MLP errors": at these K (with sufficient samples: the
#: largest n judged)
SWIGLU_KS = (10, 50)


@dataclass(frozen=True)
class Findings:
    """The paper's Section 3.2 findings at training size ``n``, judged over runs
    (:mod:`.verdicts`): ``parts[name]`` holds the comparisons a finding rests on."""

    n: int
    K_big: int
    rule: str
    parts: dict[str, tuple[Comparison, ...]]

    def status(self, name: str) -> str:
        return combine(self.parts[name])

    def table(self) -> pd.DataFrame:
        """One row per finding: its claim, verdict and the numbers behind it."""
        claims = {"1a": f"at K = {self.K_big} the best MLP beats global RFM",
                  "1b": f"at K = {self.K_big} the best MLP is within {ORACLE_FACTOR:g}× of the better oracle",
                  "2": "ReGLU beats ReLU at every K >= 10",
                  "2'": "SwiGLU beats GELU at every K >= 10",
                  "gelu~relu": f"GELU / ReLU within {EQUIVALENCE_MARGIN:g}× either way at every K",
                  "swiglu": f"SwiGLU below ReLU, GELU and ReGLU at K = {', '.join(map(str, SWIGLU_KS))}"}
        rows = [{"finding": k, "claim": claims[k], "verdict": self.status(k),
                 "evidence": "; ".join((f"{_part_label(c)}: " if len(v) > 1 else "") + c.evidence for c in v) or "not run"}
                for k, v in self.parts.items() if v]
        return pd.DataFrame(rows).set_index("finding")


#: the paper's Section 3.2 findings, in one line each (1a and 1b in the paper's words: their readings,
#: each with its threshold, are :mod:`.finding_readings`'; the verdict box names the primary one)
CLAIMS = {"1a": "\u201cMLPs outperform other methods as the number of clusters increases\u201d (§3.2; against global RFM)",
          "1b": "\u201cMLPs achieve performance close to that of \u2018oracle\u2019 baselines that \u2026 fit a separate RFM or Laplace "
                "predictor within each cluster\u201d (§3.2, the title claim)",
          "2": "ReGLU improves on ReLU when clusters are many (every K >= 10)",
          "2'": "SwiGLU improves on GELU likewise (Figure 6)",
          "gelu~relu": f"GELU behaves similarly to ReLU (Figure 6; similar: test MSE within {EQUIVALENCE_MARGIN:g}× either way "
                       "at every K)",
          "swiglu": "SwiGLU gives the lowest MLP errors for K = 10 and 50 with sufficient samples (Figure 6; at the largest n)"}


def _part_label(c: Comparison) -> str:
    """A part's name: its K, and the network compared with where a K has several comparisons."""
    return f"K = {c.K}" if c.claim != "swiglu" else f"K = {c.K}, vs {c.b.removeprefix('mlp-')}"


#: the networks each finding compares, where a profile's budget cut may leave them out at some n
_FINDING_METHODS = {"2'": (MLP_SWIGLU, MLP_GELU), "gelu~relu": (MLP_GELU, MLP_RELU), "swiglu": (MLP_SWIGLU,)}


def claims(found: "Findings", page: str, profile: str, width: int, batch: int,
           sizes: SampleEfficiencySizes | None = None) -> list[Claim]:
    """The findings as the rows of a verdict box and of the status page, at the scale ``profile``,
    ``width``, ``batch`` (the networks') and the findings' training size. A finding none of whose
    methods ran is a row "not computed", unless ``sizes`` (the profile's grid) leaves one of its
    networks out at this n by its budget's cut: the profile judges that finding at the sizes it
    declares, and declares none here."""
    out = []
    for k, v in found.parts.items():
        if not v and sizes is not None and not all(sizes.includes(m, found.n) for m in _FINDING_METHODS.get(k, ())):
            continue
        parts = [c.part(_part_label(c)) for c in v]
        evidence = "; ".join((f"{_part_label(c)}: " if len(v) > 1 else f"{_part_label(c)}, ") + c.evidence for c in v) or "no run"
        out.append(Claim.judged(page, CLAIMS[k], parts or [_NOT_RUN], evidence, profile=profile, width=width, batch=batch,
                                n=found.n))
    return out


#: the part of a finding whose methods did not run
_NOT_RUN = Part("not run", None, ())


def _mean_std(records: Mapping, method: str | None, K: int, n: int, rule: str) -> tuple[float, float, int]:
    v = list(per_run(records, method, K, n, rule).values()) if method else []
    if not v:
        return float("nan"), float("nan"), 0
    return float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else float("nan"), len(v)


def findings(records: Mapping, Ks: Iterable[int], n: int, rule: str = "best") -> Findings:
    """The findings at training size ``n`` from ``records`` (``{job: record}``, every run), every
    RFM variant scored by ``rule``:

    * 1a: at the largest K, the best MLP of Figure 2 (:data:`FIGURE2_MLPS`, lowest mean) beats
      global RFM, run by run;
    * 1b: there, it is within 2x of the better oracle (lowest mean of the two);
    * 2: ReGLU beats ReLU at every K >= 10 (and SwiGLU beats GELU, where both ran).
    """
    Ks = sorted(Ks)
    K_big = Ks[-1]
    best = best_of(records, FIGURE2_MLPS, K_big, n, rule)
    oracle = best_of(records, ORACLES, K_big, n, rule)
    parts: dict[str, tuple[Comparison, ...]] = {"1a": (), "1b": (), "2": (), "2'": ()}
    if best is not None:
        parts["1a"] = (compare(records, "1a", best, RFM, K_big, n, rule=rule),)
        if oracle is not None:
            parts["1b"] = (compare(records, "1b", best, oracle, K_big, n, threshold=ORACLE_FACTOR, rule=rule),)
    for name, (a, b) in {"2": (MLP_REGLU, MLP_RELU), "2'": (MLP_SWIGLU, MLP_GELU)}.items():
        parts[name] = tuple(c for K in Ks if K >= 10 if (c := compare(records, name, a, b, K, n, rule=rule)).runs)
    parts["gelu~relu"] = tuple(c for K in Ks if (c := compare(records, "gelu~relu", MLP_GELU, MLP_RELU, K, n, rule=rule,
                                                              threshold=EQUIVALENCE_MARGIN, lower=1 / EQUIVALENCE_MARGIN)).runs)
    parts["swiglu"] = tuple(c for K in SWIGLU_KS if K in Ks for other in (MLP_RELU, MLP_GELU, MLP_REGLU)
                            if (c := compare(records, "swiglu", MLP_SWIGLU, other, K, n, rule=rule)).runs)
    # Figure 6's own claims are rows of their own ("not computed" where its networks did not run)
    return Findings(n, K_big, rule, {k: v for k, v in parts.items() if v or k in ("1a", "1b", "2", "gelu~relu", "swiglu")})


def findings_table(records: Mapping, Ks: Iterable[int], n: int, rule: str = "best") -> pd.DataFrame:
    """Per K at training size ``n``: the best MLP of Figure 2 (:data:`FIGURE2_MLPS`), global RFM
    and the better oracle (mean and std over runs), and the ratios the findings rest on (ratios of
    means)."""
    rows = []
    for K in sorted(Ks):
        best = best_of(records, FIGURE2_MLPS, K, n, rule)
        oracle = best_of(records, ORACLES, K, n, rule)
        (m, s, r), (g, gs, _), (o, os_, _) = (_mean_std(records, x, K, n, rule) for x in (best, RFM, oracle))
        mean = {x: _mean_std(records, x, K, n, rule)[0] for x in (MLP_REGLU, MLP_RELU, MLP_SWIGLU, MLP_GELU)}
        rows.append({"K": K, "runs": r, "best MLP": best or "-", "best MLP mean": m, "best MLP std": s,
                     "global RFM mean": g, "global RFM std": gs, "better oracle": oracle or "-",
                     "oracle mean": o, "oracle std": os_, "best MLP / global RFM": m / g, "best MLP / oracle": m / o,
                     "ReGLU / ReLU": mean[MLP_REGLU] / mean[MLP_RELU],
                     "SwiGLU / GELU": mean[MLP_SWIGLU] / mean[MLP_GELU]})
    return pd.DataFrame(rows).set_index("K")


def stopping_summary(records: dict) -> list[dict[str, Any]]:
    """One row per MLP cell: K, n, activation, width, training MSE of the kept checkpoint, stop
    step and the reason (target / plateau / cap / diverged; ``?`` for cells computed before the
    reason was recorded)."""
    rows = []
    for job, rec in sorted(records.items(), key=lambda kv: (kv[0].method, kv[0].K, kv[0].n, kv[0].run)):
        if not job.method.startswith("mlp-"):
            continue
        m, net = rec["metrics"], job.spec
        rows.append({"method": job.method, "K": job.K, "n": job.n, "run": job.run, "width": net.width,
                     "train_mse": m["train_mse"], "test_mse": m["test_mse"], "stop_step": m["stop_step"],
                     "max_steps": net.max_steps, "target": net.target_mse, "reason": m.get("stop_reason", "?")})
    return rows


def stopping_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """How the MLP cells of :func:`stopping_summary` stopped: one row per cell, its training MSE,
    that MSE in units of the target (the label-noise variance), the update it stopped at and why."""
    columns = ["method", "K", "n", "width", "run", "training MSE", "training MSE / target", "stopped at (updates)", "stop reason"]
    frame = pd.DataFrame([[r["method"], r["K"], r["n"], r["width"], r["run"], r["train_mse"], r["train_mse"] / r["target"],
                           r["stop_step"], r["reason"]] for r in rows], columns=columns)
    return frame.astype({"K": int, "n": int, "width": int, "run": int, "training MSE": float, "training MSE / target": float,
                         "stopped at (updates)": int})


# --- the page: the live figures' tables and the recorded long run ------------------------------

#: the methods of Figures 2 and 6, networks first (the page's two curve tables)
NETWORK_COLUMNS = MLPS + (BAYES,)
KERNEL_COLUMNS = (LAPLACE, RFM, ORACLE_LAPLACE, ORACLE_RFM, BAYES)
#: the methods every K of a training size needs before the long run's findings are judged there
_NEEDED = (MLP_RELU, MLP_REGLU, RFM, ORACLE_RFM)


def curve_frames(records: Mapping, metric: str = "test_mse") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figures 2 and 6 as two tables of ``mean ± std`` over runs: the networks (with Bayes), then
    the kernel methods (with Bayes); every RFM variant scored by its best iteration."""
    return (with_spread(curve_table(records, list(NETWORK_COLUMNS), metric=metric)),
            with_spread(curve_table(records, list(KERNEL_COLUMNS), metric=metric)))


def stopping_note(rows: list[dict[str, Any]]) -> str:
    """How many MLP cells of :func:`stopping_summary` stopped at the update cap, and at K >= 10 how
    far their training MSE stayed above the target."""
    capped = sum(r["reason"] == "cap" for r in rows)
    text = f"{capped} of {len(rows)} MLP cells stopped at the update cap"
    big = [r for r in rows if r["K"] >= 10]
    if big:
        ratios = [r["train_mse"] / r["target"] for r in big]
        text += (f"\nK >= 10: {sum(r['reason'] == 'cap' for r in big)} of {len(big)} at the cap, "
                 f"training MSE {span(ratios, '.1f', '×')} the target")
    return text


def recorded_long(profile: Profile) -> dict:
    """The recorded cells of Figures 2 and 6 at ``profile`` (``long``): ``{job: record}``."""
    return load_recorded_cells(sweep("fig2", profile) + sweep("fig6", profile), profile.name)


def recorded_runs_note(records: Mapping, profile: Profile) -> str:
    """How much of the long run is recorded, and which runs have all six cells of the networks and
    global RFM at K = 2, 10 and 50, per training size."""
    jobs = set(sweep("fig2", profile) + sweep("fig6", profile))
    runs_at = Counter((j.n, j.run) for j in records if j.K in (2, 10, 50) and j.method in (MLP_RELU, RFM))
    complete = {n: sorted(r for (m, r), c in runs_at.items() if m == n and c == 6) for n in profile.sample_efficiency.ns}
    return (f"recorded: {len(records)} of {len(jobs)} cells of Figures 2 and 6 at profile {profile.name}\n"
            f"runs with the networks and global RFM at K = 2, 10, 50, per n: {complete}")


def missing_hours(records: Mapping, profile: Profile) -> float:
    """Core-hours the cells of Figures 2 and 6 that the profile declares but ``records`` lacks
    would take, from the recorded runs of the same cells (:func:`~..estimate.remaining_seconds`)."""
    missing = [j for j in dict.fromkeys(sweep("fig2", profile) + sweep("fig6", profile)) if j not in records]
    return remaining_seconds(missing, records)[0] / 3600


def findings_by_size(records: Mapping, Ks: Iterable[int], ns: Iterable[int]) -> dict[tuple[int, str], Findings]:
    """The findings at every training size of ``ns`` where every K has the networks, global RFM and
    the RFM oracle, under both RFM scoring rules: ``{(n, rule): Findings}``."""
    Ks = list(Ks)
    complete = complete_sizes(records, _NEEDED, Ks, ns)
    return {(n, rule): findings(records, Ks, n, rule) for n in complete for rule in RFM_RULES}


def rules_frame(found: Mapping[tuple[int, str], Findings]) -> pd.DataFrame:
    """Every finding's verdict under both RFM scoring rules, one column per (n, rule)."""
    return pd.DataFrame({f"n = {n}, {rule} iteration{'s' if rule == 'best' else ''}": f.table()["verdict"]
                         for (n, rule), f in found.items()}).fillna("not run")


def long_numbers(found: Mapping[tuple[int, str], Findings], records: Mapping, Ks: Iterable[int]) -> dict[str, str]:
    """The numbers the page's prose quotes from the long run: finding 1b's mean ratio and run count
    per training size, and at K = 1 and 2 the ranges of the best MLP's and of global RFM's ratio
    to the oracle."""
    sizes = sorted({n for n, _ in found})
    out = {}
    for n in sizes:
        c = found[(n, "best")].parts["1b"][0]
        out[f"f1b_ratio_{n // 1000}k"], out[f"f1b_runs_{n // 1000}k"] = f"{c.mean_ratio:.1f}", c.runs
    small_K = [findings_table(records, [K], n).iloc[0] for n in sizes for K in (1, 2) if K in Ks]
    if small_K:
        out["f1b_smallK_lo"] = f"{min(r['best MLP / oracle'] for r in small_K):.2f}"
        out["f1b_smallK_hi"] = f"{max(r['best MLP / oracle'] for r in small_K):.2f}"
        rfm = [r["global RFM mean"] / r["oracle mean"] for r in small_K]
        out["rfm_smallK_lo"], out["rfm_smallK_hi"] = f"{min(rfm):.2f}", f"{max(rfm):.1f}"
    return out | {"oracle_factor": f"{ORACLE_FACTOR:g}"}


def rate_at_stop(records: Mapping, sizes) -> tuple[dict[str, str], pd.DataFrame]:
    """The cosine schedule's rate (a share of the initial rate; decay to 1/100 over
    ``sizes.max_steps``, Appendix A.2) after ``sizes.min_steps`` updates and where each MLP cell
    stopped: the page's numbers (percent, and the share after ``min_steps``) and the median stop step and rate per method and K."""
    at_min = cosine_lr(sizes.min_steps, sizes.max_steps, 1.0, 0.01)
    stops = pd.DataFrame(stopping_summary(records))
    stops["rate at the stop / initial"] = [cosine_lr(s, sizes.max_steps, 1.0, 0.01) for s in stops["stop_step"]]
    numbers = {"rate_at_min_steps": f"{100 * at_min:.0f}", "share_at_min_steps": f"{at_min:.3f}",
               "median_rate_at_stop": f"{100 * stops['rate at the stop / initial'].median():.0f}"}
    return numbers, stops.groupby(["method", "K"])[["stop_step", "rate at the stop / initial"]].median()


def oracle_solves_numbers(solves: pd.DataFrame, regime: list, K: int = 10, n: int = 200_000) -> dict[str, Any]:
    """At (K, n) of the regime map: how many of the RFM oracle's EigenPro solves missed their
    target, of how many, and the oracle's test MSE at iterations 0-3 (run means)."""
    local = solves[(solves["method"] == ORACLE_RFM) & (solves["K"] == K) & (solves["n"] == n)]
    cell = [c for c in regime if c.K == K and c.n == n]
    return {"oracle200_unconverged": int((~local["reached the target"]).sum()), "oracle200_solves": len(local),
            "oracle200_its": " / ".join(f"{v:.2g}" for v in cell[0].oracle_rfm_iterations) if cell else "not recorded"}


register_figure(Figure("fig2", "Figure 2: sample efficiency as K grows (Section 3.2)",
                       (MLP_RELU, MLP_REGLU, LAPLACE, RFM, ORACLE_LAPLACE, ORACLE_RFM, BAYES), "sample_efficiency"))
register_figure(Figure("fig6", "Figure 6: all four activations (Appendix A.2)", MLPS + (BAYES,), "sample_efficiency"))


def page_cost(P: Profile, device: DeviceModel, activations=("relu", "gelu", "reglu", "swiglu")) -> dict[str, float]:
    """Page 04's heavy work (:mod:`~..estimate`): every network cell of an activation in one
    stack, charged to the update cap (an upper bound), the global kernels and the oracles."""
    s = P.sample_efficiency
    cells = len(s.Ks) * len(s.ns) * s.runs
    nets = sum(s.max_steps * mlp_update_seconds(s.width, s.batch, MIXED_LINK_D, a, device, cells) for a in activations)
    kernels = sum(kernel_fit_seconds(m, n, device) for m in ("rfm", "laplace") for n in s.ns) * len(s.Ks) * s.runs
    oracles = sum(kernel_fit_seconds(m, n, device, K) for m in ("rfm", "laplace") for n in s.ns for K in s.Ks) * s.runs
    return {"networks (at the update cap)": nets, "global kernels": kernels, "oracles": oracles}


register_cost("04_sample_efficiency", page_cost)
