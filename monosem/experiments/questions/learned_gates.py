"""The Section 3.3 page's computations: the paper's finding on MLP-gated local predictors judged on
a grid of cells (the live profile and the recorded ``long`` run use the same definition).

Finding: the MLP-gated local RFM beats global RFM at every K, and approaches the per-cluster
oracle; judged over runs, with one scoring rule for every RFM variant (:mod:`.verdicts`). Beside it, the gate purity (adjusted Rand index of the learned gates against the true
clusters), which the paper does not report.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from ...profiles import Profile
from ..recorded import load_recorded_cells
from ..results import curve_table, thousands, with_spread
from ..sweeps import sweep
from ..verdicts import RFM_RULES, complete_sizes, Claim, Comparison, combine, compare, per_run

__all__ = ["CLAIM", "gates_comparisons", "gates_status", "gates_table", "metric_updates", "claims", "FIGURE4_GLOBAL",
           "FIGURE4_LOCAL", "updates_help", "curve_frames", "recorded_long", "tables_by_size", "rules_frame", "long_numbers"]

#: the paper's Section 3.3 finding, in one line
CLAIM = "MLP-gated local RFM beats global RFM at every K"


def gates_comparisons(records: Mapping, Ks, n: int, rule: str = "best") -> tuple[Comparison, ...]:
    """Per K at training size ``n``: "the gated local RFM beats global RFM", judged on the means
    and run by run (:mod:`.verdicts`), both scored by ``rule``."""
    return tuple(compare(records, "gated RFM beats global RFM", "gated-rfm", "rfm", K, n, rule=rule) for K in sorted(Ks))


def gates_status(records: Mapping, Ks, n: int, rule: str = "best") -> str:
    """The finding "the gated local RFM beats global RFM at every K"."""
    return combine(gates_comparisons(records, Ks, n, rule))


def claims(records: Mapping, Ks, n: int, page: str, scale: str, rule: str = "best") -> list[Claim]:
    """The finding as the row of a verdict box and of the status page."""
    parts = gates_comparisons(records, Ks, n, rule)
    return [Claim(page, CLAIM, scale, combine(parts), "; ".join(f"K = {c.K}: {c.evidence}" for c in parts))]


def _mean(records: Mapping, method: str, K: int, n: int, rule: str, metric: str = "test_mse") -> float:
    v = list(per_run(records, method, K, n, rule, metric).values())
    return float(np.mean(v)) if v else float("nan")


def gates_table(records: Mapping, Ks, n: int, rule: str = "best") -> pd.DataFrame:
    """Per K at training size ``n``: gated local RFM, global RFM and the RFM oracle (means over
    runs, every RFM variant scored by ``rule``), their ratios, the paired verdict and the gate
    purity (adjusted Rand index of the test points' gates against the true clusters)."""
    rows = []
    for c in gates_comparisons(records, Ks, n, rule):
        g, o = c.mean_a, _mean(records, "oracle-rfm", c.K, n, rule)
        rows.append({"K": c.K, "runs": c.runs, "gated RFM": g, "global RFM": c.mean_b, "RFM oracle": o,
                     "gated / global": c.mean_ratio, "gated / oracle": g / o,
                     "gated / global per run": ", ".join(f"{x:.2f}" for _, x in c.ratios),
                     "gate ARI": _mean(records, "gated-rfm", c.K, n, rule, "gate_ari_test"), "verdict": c.status})
    return pd.DataFrame(rows).set_index("K")


def metric_updates(records: Mapping, K: int, n: int) -> pd.DataFrame:
    """Test MSE at RFM iterations 0-3 (iteration 0: the Laplace kernel before any metric update)
    of every RFM variant at (K, n), mean over runs: whether the metric updates help."""
    rows = {}
    for method in ("rfm", "oracle-rfm", "gated-rfm"):
        its = [rec["metrics"]["test_mse_by_iteration"] for job, rec in records.items()
               if job.method == method and job.K == K and job.n == n and "test_mse_by_iteration" in rec["metrics"]]
        if its:
            mean = np.mean(np.asarray(its, dtype=float), axis=0)
            rows[method] = {f"iteration {t}": v for t, v in enumerate(mean)} | {"runs": len(its), "last / first": mean[-1] / mean[0]}
    return pd.DataFrame.from_dict(rows, orient="index")


def updates_help(records: Mapping, method: str, K: int) -> str:
    """In how many recorded runs of ``method`` at ``K`` the metric updates end below iteration 0
    (test MSE at the last iteration under the first), per training size: "a of b at n = ..."."""
    runs: dict[int, list[bool]] = {}
    for job, rec in sorted(records.items(), key=lambda kv: (kv[0].n, kv[0].run)):
        its = rec["metrics"].get("test_mse_by_iteration")
        if job.method == method and job.K == K and its:
            runs.setdefault(job.n, []).append(its[-1] < its[0])
    return "; ".join(f"{sum(v)} of {len(v)} at n = {thousands(n)}" for n, v in runs.items()) or "no run recorded"


# --- the page: Figure 4's tables and the recorded long run -------------------------------------

#: Figure 4's methods, in the page's two tables: the network and the global kernels, then the
#: gated local predictors and the oracles
FIGURE4_GLOBAL = ("mlp-relu", "laplace", "rfm")
FIGURE4_LOCAL = ("gated-laplace", "gated-rfm", "oracle-laplace", "oracle-rfm")
#: the methods every K of a training size needs before the long run's finding is judged there
_NEEDED = ("gated-rfm", "rfm", "oracle-rfm")


def curve_frames(records: Mapping) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 4 as two tables of ``mean ± std`` test MSE over runs, every RFM variant scored by its
    best iteration: the ReLU network and the global kernels, then the gated predictors and oracles."""
    return (with_spread(curve_table(records, list(FIGURE4_GLOBAL))), with_spread(curve_table(records, list(FIGURE4_LOCAL))))


def recorded_long(profile: Profile) -> dict:
    """The recorded cells of Figure 4 at ``profile`` (``long``): ``{job: record}``."""
    return load_recorded_cells(sweep("fig4", profile), profile.name)


def tables_by_size(records: Mapping, Ks: Iterable[int], ns: Iterable[int]) -> dict[tuple[int, str], pd.DataFrame]:
    """:func:`gates_table` at every training size of ``ns`` where every K has the gated RFM, global
    RFM and the RFM oracle, under both RFM scoring rules: ``{(n, rule): table}``."""
    Ks = list(Ks)
    complete = complete_sizes(records, _NEEDED, Ks, ns)
    return {(n, rule): gates_table(records, Ks, n, rule) for n in complete for rule in RFM_RULES}


def rules_frame(tables: Mapping[tuple[int, str], pd.DataFrame]) -> pd.DataFrame:
    """The gated over global RFM ratio (ratio of means) per K, one column per (n, rule)."""
    return pd.DataFrame({f"n = {n}, {rule}": t["gated / global"] for (n, rule), t in tables.items()})


def long_numbers(tables: Mapping[tuple[int, str], pd.DataFrame], big_Ks: tuple[int, ...] = (10, 50)) -> dict[str, Any]:
    """The numbers the page's prose quotes, per training size (``<n/1000>k``): at K = 2 the gated
    over global ratio under both rules, the runs and the gate ARI; at ``big_Ks`` the smallest and
    largest factor by which the gated RFM beats global RFM."""
    out: dict[str, Any] = {}
    for n in sorted({n for n, _ in tables}):
        k, best = n // 1000, tables[(n, "best")]
        for rule in RFM_RULES:
            out[f"k2_{rule}_{k}k"] = f"{tables[(n, rule)].loc[2, 'gated / global']:.2f}"
        out[f"k2_runs_{k}k"] = int(best.loc[2, "runs"])
        out[f"k2_ari_{k}k"] = f"{best.loc[2, 'gate ARI']:.3f}"
        out[f"big_K_lo_{k}k"] = f"{1 / best.loc[list(big_Ks), 'gated / global'].max():.0f}"
        out[f"big_K_hi_{k}k"] = f"{1 / best.loc[list(big_Ks), 'gated / global'].min():.0f}"
    return out
