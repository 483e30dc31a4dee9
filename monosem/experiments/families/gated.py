"""The MLP-gated local predictors of Section 3.3 (Figure 4): a trained ReLU network's
contribution profiles, clustered by K-means into K gates, route each point to a local kernel
fitted on its gate under the network's learned metric G_c (``gated-laplace``, ``gated-rfm``).
:func:`register_gated` declares a variant with its routing or its features swapped."""

from __future__ import annotations

import tempfile
from typing import Any, Mapping

from ...gating import MLPGatedRegressor
from ...profiles import Profile, SampleEfficiencySizes
from ..cache import Job, ResultCache
from ..specs import GatedSpec
from ..methods import by_iteration, dataset, local_solves, metrics
from ..registry import Method, register_method
from .kernels import kernel_spec
from .networks import MLP_RELU, network_spec, trained_mlp

__all__ = ["GATED_LAPLACE", "GATED_RFM", "register_gated", "source_job", "compute_gated"]

GATED_LAPLACE, GATED_RFM = "gated-laplace", "gated-rfm"


def source_job(job: Job) -> Job:
    """The MLP cell whose network a gated cell routes with: its source ReLU network on its data."""
    return Job(MLP_RELU, job.data, job.spec.source, job.profile)


def _sources(job: Job) -> list[Job]:
    return [source_job(job)]


def compute_gated(job: Job, cache: ResultCache | None = None, *, routing: str = "learned", features: str = "learned") -> dict[str, Any]:
    """A gated cell's metrics: its spec's local kernels (RFM when they name an AGOP sample count,
    else Laplace) on gates from ``routing`` ("learned": the network's; "true": the true clusters)
    under ``features`` ("learned": the metric G_c; "isotropic": none),
    :class:`~monosem.gating.MLPGatedRegressor`."""
    gated = job.spec
    local = "laplace" if gated.local.agop_samples is None else "rfm"
    src = source_job(job)
    if cache is None:
        cache = ResultCache(tempfile.mkdtemp(prefix="monosem-"))
    mlp = trained_mlp(src, cache)
    _, (X, y, c), (Xte, yte, cte) = dataset(job)
    est = MLPGatedRegressor(mlp, local=local, n_gates=job.K, n_init=gated.n_init, max_iter=gated.max_iter,
                            local_params=gated.local.solver.kwargs(job.run, job.data.dtype) | ({"agop_samples": gated.local.agop_samples} if local == "rfm" else {}),
                            random_state=job.run, routing=routing, features=features).fit(X, y, clusters=c)
    # route the test points once (by their true clusters under true routing)
    gates = est.assign(Xte) if routing == "learned" else cte.numpy()
    out = {
        "gate_ari_train": est.gate_purity(X, c, gates=est.train_gates_),
        "gate_ari_test": est.gate_purity(Xte, cte, gates=gates),
        "active_neurons": int(len(est.active_)),
        "local_solves": local_solves(est.estimators_),
    }
    if local == "laplace":
        return metrics(est.predict(Xte, gates=gates), yte) | out
    its = by_iteration(lambda iteration: est.predict(Xte, iteration=iteration, gates=gates), yte)
    return metrics(its.pop("preds")[-1], yte) | {"test_mse_by_iteration": its["test_mse_by_iteration"]} | out


def _whole_set(data) -> int:
    """A gate may merge clusters: its system is bounded by ``n`` only."""
    return data.n


def register_gated(name: str, *, local: str, routing: str = "learned", features: str = "learned",
                   style: Mapping[str, Any] | None = None) -> Method:
    """Declare the gated method ``name``: Section 3.3's pipeline with ``local`` kernels, its
    ``routing`` and its ``features`` (:func:`compute_gated`), routing with the grid's ReLU network."""
    rfm = local == "rfm"

    def params(P: Profile, se: SampleEfficiencySizes) -> GatedSpec:
        return GatedSpec(local=kernel_spec("median", se, rfm), source=network_spec("relu", se.width, se.batch, se, P))

    def compute(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
        return compute_gated(job, cache, routing=routing, features=features)

    return register_method(name, params=params, compute=compute, sources=_sources, largest_solve=_whole_set, style=style,
                           by_iteration=rfm)


register_gated(GATED_LAPLACE, local="laplace", style=dict(color="tab:purple", marker="P", label="MLP-gated local Laplace"))
register_gated(GATED_RFM, local="rfm", style=dict(color="tab:orange", marker="P", label="MLP-gated local RFM"))
