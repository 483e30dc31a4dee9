"""The Section 3.3 page's computations: the paper's finding on MLP-gated local predictors judged on
a grid of cells (the live profile and the recorded ``long`` run use the same definition).

Finding: the MLP-gated local RFM beats global RFM at every K, and approaches the per-cluster
oracle; judged over runs, with one scoring rule for every RFM variant (:mod:`.verdicts`). Beside it, the gate purity (adjusted Rand index of the learned gates against the true
clusters), which the paper does not report.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from ..verdicts import Claim, Comparison, combine, compare, per_run

__all__ = ["CLAIM", "gates_comparisons", "gates_status", "gates_table", "metric_updates", "claims"]

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
