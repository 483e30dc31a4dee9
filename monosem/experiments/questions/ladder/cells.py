"""The ladder's cells: its rungs and sizes at each profile (:func:`ladder_sizes`), its Figure 2
cells (:func:`ladder_jobs`, figure ``ladder``) and the gap cells that score a ladder network
against both oracles cluster by cluster (:class:`GapSpec`, :func:`compute_gap`, figure
``ladder-gap``), registered on import."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ....checks import check_choice, check_int
from ....profiles import Profile, get_profile
from ....tables import thousands
from ....train.step import FASTEST_STEP_REVISION
from ...cache import Job, ResultCache
from ...families.kernels import ORACLE_LAPLACE, ORACLE_RFM, fit_oracle
from ...families.networks import MLP_REGLU, MLP_RELU, trained_mlp
from ...methods import dataset, per_cluster_mse, specialization
from ...registry import register_method
from ...specs import DataSpec, KernelSpec, NetworkSpec
from ...sweeps import Figure, method_spec, register_figure, with_solver
from ..sample_efficiency import ORACLES

__all__ = ["KNOBS", "Rung", "LadderSizes", "ladder_sizes", "ladder_jobs", "rung_of", "GAP", "GapSpec", "gap_job", "compute_gap",
           "gap_jobs", "ready_gap_jobs"]

#: what a rung changes against the rung before it
KNOBS = ("start", "width", "batch", "n")


@dataclass(frozen=True)
class Rung:
    """One rung of the ladder: a network (width, batch) trained on ``n`` examples, reached from
    the rung before by changing ``knob``; its networks exist for runs ``0 .. runs - 1`` at the
    ladder's question K, and ``control_runs`` (``None``: as many) at its control K;
    ``relu``: the ReLU network trains here too (the paper's network); ``step_revision``: the
    training step's revision (``None``: the profile's, so that the first rung is the profile's
    own Figure 2 cell)."""

    knob: str
    width: int
    batch: int
    n: int
    runs: int = 1
    control_runs: int | None = None
    relu: bool = False
    step_revision: int | None = FASTEST_STEP_REVISION

    def __post_init__(self) -> None:
        check_choice(self.knob, "knob", KNOBS)
        for name in ("width", "batch", "n", "runs"):
            check_int(getattr(self, name), name)
        if self.control_runs is not None:
            check_int(self.control_runs, "control_runs")

    @property
    def networks(self) -> tuple[str, ...]:
        """The networks this rung trains: ReGLU, and ReLU where :attr:`relu`."""
        return (MLP_REGLU, MLP_RELU) if self.relu else (MLP_REGLU,)

    @property
    def label(self) -> str:
        return f"{thousands(self.width)} \u00d7 {thousands(self.batch)}, n = {thousands(self.n)}"


@dataclass(frozen=True)
class LadderSizes:
    """The ladder of a profile: its cluster counts (the question first, the control after), its
    rungs in order, the test-set size and the oracles' runs at every n of the ladder."""

    Ks: tuple[int, ...]
    rungs: tuple[Rung, ...]
    n_test: int
    oracle_runs: int

    @property
    def ns(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(r.n for r in self.rungs))

    def runs(self, rung: Rung, K: int) -> int:
        """How many runs ``rung``'s networks have at ``K``: :attr:`Rung.runs` at the question
        (``Ks[0]``), :attr:`Rung.control_runs` where it sets them at a control K."""
        return rung.runs if K == self.Ks[0] or rung.control_runs is None else rung.control_runs


def _long_ladder() -> LadderSizes:
    """The ``long`` profile's ladder: from its own Figure 2 network to the paper's (Appendix A.2's
    width and batch and its training sizes, read from the ``paper`` profile)."""
    long, paper = get_profile("long").sample_efficiency, get_profile("paper").sample_efficiency
    w0, b0, n0 = long.width, long.batch, max(long.ns)
    W, B = paper.width, paper.batch
    bigger = tuple(n for n in paper.ns if n > n0)
    # the foot is Figure 2's own cell, where ReLU trains beside ReGLU: ReLU's point there is the
    # same network's scale comparison with the paper's network, at no cost
    # five runs where run 0 turned at K = 50: the widest network at the long profile's batch (the
    # lowest ratio of run 0) and the paper's network (the batch step that raised it again); the
    # control K keeps run 0 above its foot
    rungs = (Rung("start", w0, b0, n0, runs=long.runs, relu=True, step_revision=None),
             *(Rung("width", w, b0, n0, runs=5 if w == W else 1, control_runs=1) for w in (2 * w0, W) if w <= W),
             Rung("batch", W, B, n0, runs=5, control_runs=1, relu=True),
             *(Rung("n", W, B, n, relu=True) for n in bigger))
    return LadderSizes(Ks=(50, 10), rungs=rungs, n_test=long.n_test, oracle_runs=long.runs)


def _smoke_ladder() -> LadderSizes:
    """A ladder of the same shape at the smoke profile's sizes (seconds; for the tests and the
    smoke build of the page)."""
    se = get_profile("smoke").sample_efficiency
    w0, b0, n0 = se.width, se.batch // 4, min(se.ns)
    rungs = (Rung("start", w0, b0, n0, relu=True, step_revision=None), Rung("width", 2 * w0, b0, n0),
             Rung("batch", 2 * w0, 4 * b0, n0, relu=True), Rung("n", 2 * w0, 4 * b0, max(se.ns), relu=True))
    return LadderSizes(Ks=(10,), rungs=rungs, n_test=se.n_test, oracle_runs=1)


_LADDERS = {"smoke": _smoke_ladder, "long": _long_ladder}


def ladder_sizes(profile: str | Profile) -> LadderSizes | None:
    """The ladder of ``profile`` (``None`` where the profile declares none)."""
    P = get_profile(profile)
    make = _LADDERS.get(P.name)
    return make() if make is not None else None


def _network_job(P: Profile, method: str, rung: Rung, K: int, run: int, n_test: int) -> Job:
    spec = method_spec(method, P, (rung.width, rung.batch))
    if rung.step_revision is not None:
        spec = dataclasses.replace(spec, step_revision=int(rung.step_revision))
    return Job(method, _data(K, rung.n, run, n_test), spec, P.name)


def _data(K: int, n: int, run: int, n_test: int) -> DataSpec:
    return DataSpec(int(K), int(n), int(run), int(n_test))


def ladder_jobs(P: Profile) -> list[Job]:
    """The ladder's cells at ``P``, cheapest first within each K: the oracles at every n, then run
    0 of every rung's networks, then the further runs (so that one worker going down the list
    fills every rung before it repeats one)."""
    sizes = ladder_sizes(P)
    if sizes is None:
        return []
    jobs: list[Job] = []
    for K in sizes.Ks:
        for n in sizes.ns:
            for r in range(sizes.oracle_runs):
                data = _data(K, n, r, sizes.n_test)
                jobs += [Job(m, data, with_solver(method_spec(m, P), m, data), P.name) for m in ORACLES]
        top = max(sizes.runs(rung, K) for rung in sizes.rungs)
        for run in range(top):
            for rung in sizes.rungs:
                if run < sizes.runs(rung, K):
                    jobs += [_network_job(P, m, rung, K, run, sizes.n_test) for m in rung.networks]
    return list(dict.fromkeys(jobs))


register_figure(Figure("ladder", "Finding 1b's scale ladder: width, batch and n from the long profile's network to the paper's",
                       (ORACLE_RFM, ORACLE_LAPLACE, MLP_REGLU, MLP_RELU), ladder_sizes, jobs=ladder_jobs))


def rung_of(job: Job, sizes: LadderSizes) -> Rung | None:
    """The rung a network cell belongs to (``None`` for an oracle or a cell off the ladder)."""
    spec = job.spec
    if not job.method.startswith("mlp-"):
        return None
    for rung in sizes.rungs:
        if (spec.width, spec.batch, job.n) == (rung.width, rung.batch, rung.n):
            return rung
    return None


# ------------------------------------------------------------------ what the gap is made of
#: the method of a gap cell: a ladder network and both oracles on the same data, scored cluster by cluster
GAP = "ladder-gap"


@dataclass(frozen=True)
class GapSpec:
    """A gap cell: the ``mlp-*`` network ``network`` of a ladder rung and the two per-cluster
    oracles (their kernel specs), all on the cell's data, scored cluster by cluster."""

    network: NetworkSpec
    oracle_rfm: KernelSpec
    oracle_laplace: KernelSpec

    @property
    def label(self) -> str:
        return f"{self.network.activation} {self.network.width} x {self.network.batch} against the oracles, by cluster"


def gap_job(network_job: Job) -> Job:
    """The gap cell of a ladder network cell (same data; the oracles' specs as the ladder's)."""
    P = get_profile(network_job.profile)
    kernels = [with_solver(method_spec(m, P), m, network_job.data) for m in (ORACLE_RFM, ORACLE_LAPLACE)]
    return Job(GAP, network_job.data, GapSpec(network_job.spec, *kernels), network_job.profile)


def _gap_source(gap: Job) -> Job:
    return Job(f"mlp-{gap.spec.network.activation}", gap.data, gap.spec.network, gap.profile)


def compute_gap(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    """Per cluster of the cell's test set: the network's test MSE, each oracle's (RFM at every
    iteration 0-3), the cluster's link and training count, and the network's units (active neurons
    whose best-aligned predictive direction is the cluster's, the specialized ones among them,
    A_j >= 0.71: page 03's measures, and the same within the predictive coordinates). The network
    comes from the cache, or is trained first."""
    if cache is None:
        raise ValueError("a gap cell reads (or trains into) a cache: its network is kept there")
    src = _gap_source(job)
    mlp = trained_mlp(src, cache)
    model, (_, _, c), (Xte, yte, cte) = dataset(src)
    with torch.no_grad():
        pred = mlp(Xte.to(mlp.W.device, mlp.W.dtype)).double().cpu().numpy()
    K = job.K
    rfm, _ = fit_oracle(Job(ORACLE_RFM, job.data, job.spec.oracle_rfm, job.profile))
    laplace, _ = fit_oracle(Job(ORACLE_LAPLACE, job.data, job.spec.oracle_laplace, job.profile))
    rfm_by_it = [per_cluster_mse(rfm.predict(Xte, groups=cte, iteration=t), yte, cte, K) for t in range(4)]
    units = specialization(mlp, model, by_cluster=True)
    mlp_by_cluster = per_cluster_mse(pred, yte, cte, K)
    return {"test_mse": float(((pred.reshape(-1) - yte.double().numpy().reshape(-1)) ** 2).mean()),
            "links": list(model.link_names),
            "train_count_by_cluster": [int(v) for v in torch.bincount(torch.as_tensor(c), minlength=K)],
            "test_count_by_cluster": [int(v) for v in torch.bincount(torch.as_tensor(cte), minlength=K)],
            "mlp_by_cluster": mlp_by_cluster,
            "oracle_rfm_by_cluster_by_iteration": rfm_by_it,
            "oracle_rfm_test_mse_by_iteration": [float(np.average(np.nan_to_num(v), weights=np.bincount(cte.numpy(), minlength=K)))
                                                 for v in rfm_by_it],
            "oracle_laplace_by_cluster": per_cluster_mse(laplace.predict(Xte, groups=cte), yte, cte, K),
            "n_active": units["n_active"], "frac_A071": units["frac_A071"],
            "units_by_cluster": units["aligned_by_cluster"], "specialized_by_cluster": units["specialized_by_cluster"],
            "specialized_predictive_by_cluster": units["specialized_predictive_by_cluster"],
            "frac_A071_predictive": units["frac_A071_predictive"], "median_off_predictive_norm": units["median_off_predictive_norm"]}


register_method(GAP, compute=compute_gap)


def gap_jobs(P: Profile) -> list[Job]:
    """A gap cell for every ladder network at the question's K (``Ks[0]``; run 0 of every rung,
    then the further runs, as the ladder). The control K has none: the page takes the gap apart at
    the question's K only, and a gap cell at the foot retrains its network (a network's time for
    nothing the page reads)."""
    sizes = ladder_sizes(P)
    return [gap_job(j) for j in ladder_jobs(P) if j.method.startswith("mlp-") and sizes is not None and j.K == sizes.Ks[0]]


register_figure(Figure("ladder-gap", "What finding 1b's gap is made of: every ladder network against the oracles, cluster by cluster",
                       (GAP,), ladder_sizes, jobs=gap_jobs))


def ready_gap_jobs(P: Profile, cache: ResultCache, Ks: tuple[int, ...] | None = None, foot: bool = True) -> list[Job]:
    """The gap cells at ``P`` that can run now without training a network another worker may be
    training: those whose network is finished in ``cache`` (its result there), and, with
    ``foot``, those of the ladder's foot (the profile's own Figure 2 networks, which the ladder
    never trains: a gap cell retrains its recorded network, a network's time; without ``foot``
    every cell is seconds to minutes of scoring: a foot network's result in the cache, restored
    from its recorded cell, carries no weights)."""
    sizes = ladder_sizes(P)
    first = sizes.rungs[0] if sizes else None
    out = []
    for job in gap_jobs(P):
        src = _gap_source(job)
        at_foot = rung_of(src, sizes) == first
        if (Ks is None or job.K in Ks) and not cache.has(job) and (foot if at_foot else cache.has(src)):
            out.append(job)
    return out


def _max_steps(profile: str | Profile) -> int:
    """A.2's update cap at ``profile``."""
    return method_spec(MLP_REGLU, get_profile(profile)).max_steps
