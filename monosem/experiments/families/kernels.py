"""The kernel methods of Figures 2 and 4 (Section 3.2): the Laplace kernel and RFM fitted on all
the data (``laplace``, ``rfm``; bandwidth by the cluster-median rule) and one per true cluster,
the oracles (``oracle-laplace``, ``oracle-rfm``; bandwidth by the median rule). Every solve is
exact below the grid's ``exact_max_n`` and EigenPro from there on (Appendix A.2)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...kernels import LaplaceKernelRegressor, PerClusterOracle, RFMRegressor
from ...profiles import Profile, SampleEfficiencySizes
from ..cache import EARLIER_CPU_SECONDS, EARLIER_SECONDS, Job, ResultCache
from ..specs import DataSpec, KernelSpec, SolverSpec
from ..methods import by_iteration, cluster_args, dataset, local_solves, metrics, rfm_solves, solve_summary
from ..registry import register_method

__all__ = ["LAPLACE", "RFM", "ORACLE_LAPLACE", "ORACLE_RFM", "ORACLES", "solver_spec", "kernel_spec", "fit_oracle",
           "compute_laplace", "compute_rfm", "compute_oracle"]

LAPLACE, RFM, ORACLE_LAPLACE, ORACLE_RFM = "laplace", "rfm", "oracle-laplace", "oracle-rfm"
#: the per-cluster oracles (true-cluster routing, Section 3.2)
ORACLES = (ORACLE_RFM, ORACLE_LAPLACE)

def solver_spec(se: SampleEfficiencySizes) -> SolverSpec:
    """A kernel cell's solver on the grid ``se`` (the paper's ridge, target and limit: the spec's
    defaults)."""
    return SolverSpec(exact_max_n=se.exact_max_n)


def kernel_spec(bandwidth: str, se: SampleEfficiencySizes, rfm: bool) -> KernelSpec:
    """A kernel on the grid ``se``: its bandwidth rule, the grid's solver and, for RFM, the grid's
    AGOP sample count."""
    return KernelSpec(bandwidth, solver_spec(se), se.agop_samples if rfm else None)


def whole_set(data: DataSpec) -> int:
    """The largest system of a method fitted on all the data: ``n``."""
    return data.n


def per_cluster(data: DataSpec) -> int:
    """The largest system of a per-cluster fit: at most 1.5 n / K on the balanced mixtures
    (cluster sizes are binomial: at n / K >= 400 they never come near 1.5 n / K), up to ``n``
    under Zipf weights. :func:`fit_oracle` checks the bound on the data."""
    return data.n if data.zipf is not None else math.ceil(1.5 * data.n / data.K)


def compute_laplace(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    k = job.spec
    _, (X, y, c), (Xte, yte, _) = dataset(job)
    est = LaplaceKernelRegressor(bandwidth=k.bandwidth, **k.solver.kwargs(job.run, job.data.dtype))
    est.fit(X, y, groups=c if k.bandwidth == "cluster-median" else None)
    return metrics(est.predict(Xte), yte) | {"bandwidth": float(est.bandwidth_), "solver": str(est.solver_), "solve": solve_summary(est.solve_info_)}


def compute_rfm(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    """Global RFM, checkpointed after every iteration beside the cache (a fit on 50 000 points
    takes up to an hour on one core: an interruption costs one iteration, not the fit)."""
    k = job.spec
    _, (X, y, c), (Xte, yte, cte) = dataset(job)
    ckpt = None if cache is None else cache.root / "checkpoints" / f"{job.key()}-rfm.pt"
    est = RFMRegressor(iterations=3, bandwidth=k.bandwidth, agop_samples=k.agop_samples, **k.solver.kwargs(job.run, job.data.dtype))
    est.fit(X, y, groups=c if k.bandwidth == "cluster-median" else None, checkpoint=ckpt)
    its = by_iteration(lambda iteration: est.predict(Xte, iteration=iteration), yte)
    best = int(np.argmin(its["test_mse_by_iteration"]))
    if ckpt is not None:
        ckpt.unlink(missing_ok=True)
    # the paper's displayed curve is the best of iterations 0-3 (an optimistic envelope)
    return metrics(its.pop("preds")[best], yte, **cluster_args(job, cte)) | its | {
        "best_iteration": best, "solves": rfm_solves(est),
        EARLIER_SECONDS: est.resumed_seconds_, EARLIER_CPU_SECONDS: est.resumed_cpu_seconds_}


def fit_oracle(job: Job, checkpoint: Path | None = None):
    """The per-cluster oracle of an oracle cell fitted on its training set (RFM when its spec
    names an AGOP sample count, else Laplace), and the cell's test set ``(Xte, yte, cte)``.
    ``checkpoint``: an RFM oracle's path prefix, one file per cluster
    (:meth:`~monosem.kernels.PerClusterOracle.fit`)."""
    k = job.spec
    solver = k.solver.kwargs(job.run, job.data.dtype)
    _, (X, y, c), test = dataset(job)
    if k.agop_samples is None:
        base = LaplaceKernelRegressor(bandwidth="median", **solver)
    else:
        base = RFMRegressor(iterations=3, bandwidth="median", agop_samples=k.agop_samples, **solver)
    largest = int(torch.bincount(torch.as_tensor(c)).max())
    if largest >= k.solver.exact_max_n and k.solver.eigenpro_revision is None:
        raise RuntimeError(f"{job.label()}: a cluster of {largest} examples is solved by EigenPro, but the job's key does not name "
                           "the EigenPro revision (the bound of monosem.experiments.families.kernels.per_cluster is wrong)")
    return PerClusterOracle(base).fit(X, y, groups=c, checkpoint=checkpoint), test


def compute_oracle(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    """A per-cluster oracle cell; an RFM oracle checkpoints every cluster's fit after every
    iteration beside the cache (at K = 1 and 2 a cluster is 25 000-50 000 points: up to an hour
    on one core)."""
    rfm = job.spec.agop_samples is not None
    ckpt = cache.root / "checkpoints" / f"{job.key()}-oracle" if rfm and cache is not None else None
    oracle, (Xte, yte, cte) = fit_oracle(job, ckpt)
    fits = [oracle.estimators_[k] for k in oracle.clusters_.tolist()]
    solves = {"local_solves": local_solves(fits)}
    if not rfm:
        return metrics(oracle.predict(Xte, groups=cte), yte, **cluster_args(job, cte)) | solves
    its = by_iteration(lambda iteration: oracle.predict(Xte, groups=cte, iteration=iteration), yte)
    if ckpt is not None:
        for path in oracle.checkpoint_files(ckpt):
            path.unlink(missing_ok=True)
    return metrics(its.pop("preds")[-1], yte, **cluster_args(job, cte)) | its | solves | {
        EARLIER_SECONDS: sum(f.resumed_seconds_ for f in fits), EARLIER_CPU_SECONDS: sum(f.resumed_cpu_seconds_ for f in fits)}


def _params(bandwidth: str, rfm: bool):
    def params(P: Profile, se: SampleEfficiencySizes) -> KernelSpec:
        return kernel_spec(bandwidth, se, rfm)
    return params


register_method(LAPLACE, params=_params("cluster-median", False), compute=compute_laplace, largest_solve=whole_set,
                style=dict(color="tab:gray", marker="^", label="Laplace (global)"))
register_method(RFM, params=_params("cluster-median", True), compute=compute_rfm, largest_solve=whole_set, by_iteration=True,
                style=dict(color="tab:green", marker="^", label="RFM (global, best of it. 0-3)"))
register_method(ORACLE_LAPLACE, params=_params("median", False), compute=compute_oracle, largest_solve=per_cluster,
                style=dict(color="tab:gray", ls="--", marker="x", label="Laplace oracle (per cluster)"))
register_method(ORACLE_RFM, params=_params("median", True), compute=compute_oracle, largest_solve=per_cluster, by_iteration=True,
                style=dict(color="tab:green", ls="--", marker="x", label="RFM oracle (per cluster)"))
