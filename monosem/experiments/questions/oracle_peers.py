"""Finding 1b's denominator checked against the RFM authors' own library: the per-cluster RFM
oracle fitted by xrfm, cluster by cluster, beside this package's (page 04).

Two settings of xrfm: ``"median"``, this package's settings as far as xrfm's API allows (the
Laplace kernel, the median-distance bandwidth recomputed after every update, ridge 1e-6, three
AGOP updates, an exact solve; ``tests/test_xrfm_conformance.py`` shows it gives this package's
predictions to 1e-5), and ``10.0``, xrfm's own default of a constant bandwidth. Each is a cell of
the result store (method :data:`METHOD` on the mixed-link data of finding 1b's question: K = 50,
n = 50 000, runs 0-4), computed once where xrfm is installed (``pip install monosem[peers]``) and
recorded; the page reads the records, so it builds without xrfm.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ...checks import check_int, check_positive
from ...profiles import Profile
from ..cache import Job, ResultCache
from ..methods import dataset
from ..registry import register_method
from ..specs import DataSpec
from ..sweeps import Figure, register_figure
from ..verdicts import Part, best_of, per_run
from .ladder import ladder_sizes
from .sample_efficiency import ORACLE_FACTOR, ORACLES

__all__ = ["METHOD", "SETTINGS", "PeerOracleSpec", "peer_jobs", "compute_peer", "peer_frame", "peer_ratio_parts", "peer_numbers"]

#: the method of an xrfm oracle cell
METHOD = "oracle-xrfm"
#: the bandwidths compared: this package's median rule, and xrfm's default constant bandwidth
SETTINGS: tuple[str | float, ...] = ("median", 10.0)


@dataclass(frozen=True)
class PeerOracleSpec:
    """An xrfm oracle cell: the bandwidth (``"median"`` or a constant), the ridge, the AGOP updates
    and the AGOP's sample count (Appendix A.2's: 1e-6, 3, 20 000)."""

    bandwidth: str | float = "median"
    ridge: float = 1e-6
    iterations: int = 3
    agop_samples: int = 20_000

    def __post_init__(self) -> None:
        if not (self.bandwidth == "median" or (isinstance(self.bandwidth, float) and self.bandwidth > 0)):
            raise ValueError(f"bandwidth={self.bandwidth!r}: 'median' or a positive float")
        check_positive(self.ridge, "ridge")
        check_int(self.iterations, "iterations")
        check_int(self.agop_samples, "agop_samples")

    @property
    def label(self) -> str:
        return f"xrfm, bandwidth {self.bandwidth}"


def compute_peer(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    """xrfm's per-cluster oracle on the cell's data: per cluster its test MSE at iterations 0..T,
    pooled per iteration over the test set (``test_mse_by_iteration``; ``test_mse``: the best, the
    book's rule for every RFM variant) and the fits' time."""
    from ...kernels.peers import xrfm_oracle

    spec = job.spec
    _, (X, y, c), (Xte, yte, cte) = dataset(job)
    t0 = time.perf_counter()
    fit = xrfm_oracle(X, y, c, Xte, yte, cte, iterations=spec.iterations, bandwidth=spec.bandwidth, ridge=spec.ridge,
                      agop_samples=spec.agop_samples)
    pooled = [float(v) for v in fit.pooled_test_mse()]
    by_cluster = np.full((job.K, spec.iterations + 1), np.nan)
    by_cluster[fit.clusters] = fit.test_mse
    return {"test_mse": min(pooled), "test_mse_by_iteration": pooled,
            "by_cluster_by_iteration": [[None if np.isnan(v) else float(v) for v in row] for row in by_cluster.T],
            "fit_seconds": time.perf_counter() - t0}


register_method(METHOD, compute=compute_peer)


def peer_jobs(P: Profile) -> list[Job]:
    """The xrfm oracle cells at ``P``: finding 1b's question (the ladder's K and foot n), every run
    of the ladder's oracles, each setting of :data:`SETTINGS`."""
    sizes = ladder_sizes(P)
    if sizes is None:
        return []
    n = sizes.rungs[0].n
    return [Job(METHOD, DataSpec(sizes.Ks[0], n, r, sizes.n_test), PeerOracleSpec(bandwidth=b), P.name)
            for b in SETTINGS for r in range(sizes.oracle_runs)]


register_figure(Figure("oracle-peers", "Finding 1b's RFM oracle fitted by xrfm, the RFM authors' library",
                       (METHOD,), ladder_sizes, jobs=peer_jobs))


def _peer(records: Mapping[Job, Mapping[str, Any]], bandwidth, K: int, n: int) -> dict[int, Mapping[str, Any]]:
    return {j.run: r["metrics"] for j, r in records.items()
            if j.method == METHOD and j.spec.bandwidth == bandwidth and (j.K, j.n) == (K, n)}


def peer_frame(peers: Mapping[Job, Mapping[str, Any]], gaps: Mapping[Job, Mapping[str, Any]], width: int, batch: int,
               n: int) -> pd.DataFrame:
    """One row per (run, cluster) of the network of ``width`` x ``batch`` on ``n`` examples (its
    ladder gap cells):
    the cluster's link and training count, this package's RFM oracle at iteration 0 (the Laplace
    oracle) and at the iteration the best rule picks, xrfm's at each setting (its best iteration
    over the whole test set), and the network's test MSE."""
    rows = []
    for job, rec in gaps.items():
        if (job.spec.network.width, job.spec.network.batch, job.n) != (width, batch, n):
            continue
        m = rec["metrics"]
        its = np.asarray(m["oracle_rfm_by_cluster_by_iteration"], dtype=float)
        best_it = int(np.argmin(m["oracle_rfm_test_mse_by_iteration"]))
        for c in range(job.K):
            row = {"run": job.run, "network": job.spec.network.activation, "cluster": c, "link": m["links"][c],
                   "train count": m["train_count_by_cluster"][c], "MLP": m["mlp_by_cluster"][c],
                   "RFM oracle, iteration 0": its[0, c], "RFM oracle, best iteration": its[best_it, c],
                   "Laplace oracle": m["oracle_laplace_by_cluster"][c]}
            for b in SETTINGS:
                peer = _peer(peers, b, job.K, job.n).get(job.run)
                if peer is not None:
                    pooled = peer["test_mse_by_iteration"]
                    it = int(np.argmin(pooled))
                    row[f"xrfm ({b}), best iteration"] = peer["by_cluster_by_iteration"][it][c]
            rows.append(row)
    return pd.DataFrame(rows)


def peer_ratio_parts(records: Mapping[Job, Mapping[str, Any]], peers: Mapping[Job, Mapping[str, Any]], mlps, K: int, n: int) -> dict[str, Part]:
    """Finding 1b's primary statistic (the best network over the better oracle, ratio of means and
    per run) with the oracle taken from this package, and from the better (lower mean) of this
    package's and each xrfm setting's: ``{oracle name: Part}``."""
    best = best_of(records, mlps, K, n)
    own = best_of(records, ORACLES, K, n)
    if best is None or own is None:
        return {}
    m = per_run(records, best, K, n)
    candidates = {own: per_run(records, own, K, n)}
    for b in SETTINGS:
        peer = {r: v["test_mse"] for r, v in _peer(peers, b, K, n).items()}
        if peer:
            candidates[f"xrfm ({b})"] = peer
    out = {}
    for name, o in candidates.items():
        runs = sorted(set(m) & set(o))
        if runs:
            out[name] = Part(f"K = {K}, {best.removeprefix('mlp-')} / {name}", float(np.mean([m[r] for r in runs])) /
                             float(np.mean([o[r] for r in runs])), tuple(m[r] / o[r] for r in runs), high=ORACLE_FACTOR)
    return out


def peer_numbers(parts: Mapping[str, Part], frame: pd.DataFrame) -> dict[str, str]:
    """The page's words: the oracle's mean test MSE per implementation and setting, finding 1b's
    ratio against each and its verdict, and the clusters where xrfm's oracle beats this package's
    by more than 2x."""
    if not parts:
        return {"op_words": "no xrfm oracle cell is recorded yet", "op_clusters": "none recorded", "op_moves": "not judged"}
    words = "; ".join(f"against {name}: {p.mean:.2f}× on the means ({', '.join(f'{v:.2f}' for v in p.values)}; {p.status})"
                      for name, p in parts.items())
    cols = [c for c in frame.columns if c.startswith("xrfm (")] if not frame.empty else []
    clusters = []
    for col in cols:
        better = frame[frame[col] < frame["RFM oracle, best iteration"] / 2]
        links = better["link"].value_counts()
        clusters.append(f"{col.split(',')[0]}: {len(better)} of {len(frame)} (run, cluster) pairs"
                        + (f" ({', '.join(f'{k} {v}' for k, v in links.items())})" if len(better) else ""))
    statuses = {p.status for p in parts.values()}
    moves = (f"the verdict is the same against every oracle ({statuses.pop()}): the book's oracle stays this package's"
             if len(statuses) == 1 else "the verdict changes with the oracle: " + ", ".join(f"{k}: {p.status}" for k, p in parts.items()))
    return {"op_words": words, "op_clusters": "; ".join(clusters) or "none recorded", "op_moves": moves}
