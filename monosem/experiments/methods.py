"""What one job computes: every method of Figures 2, 4 and 6 on one (K, n, run) data set (and
page 09's mixture of experts, ``moe-*``).

Each ``compute_*`` function takes a :class:`~monosem.experiments.cache.Job` and returns a dict of
metrics (JSON-friendly). :func:`compute` dispatches on ``job.method``. All methods of one
(K, n, run) use exactly the same training and test tensors (Appendix A.2): the nested training
pool of seed 12345 + r and the test set of seed 54321 + r of ``mixed_link_model(K, run=r)``.

One module for what a cell computes: every method reads its data through :func:`dataset` and
stacks its networks through :func:`plan`; a new method registers its own computation instead
(:mod:`.registry`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..atomic import atomic_torch_save, quarantine
from ..data import mixed_link_model, model_seed
from ..device import get_device
from ..gating import MLPGatedRegressor
from ..kernels import LaplaceKernelRegressor, PerClusterOracle, RFMRegressor
from ..models import MLP, MLPStack, MoE, MoEStack
from ..specialization import active_set, alignment, importance
from ..train import TrainConfig, TrainData, step_memory_bytes, train
from .cache import EARLIER_CPU_SECONDS, EARLIER_SECONDS, Job, ResultCache, job_key
from .legacy import legacy_config
from .registry import METHODS
from .sweeps import MIXED_LINK_D

__all__ = ["compute", "compute_many", "plan", "dataset", "mse", "fit_oracle", "trained_mlp", "per_cluster_mse", "specialization", "load_mlp", "load_moe", "trained_moe", "max_stack", "stop_reason",
           "specialization_metrics", "source_job", "networks_to_retrain",
           "train_mlps", "load_network", "save_network"]


#: stacks never exceed this many networks (beyond it a GPU gains nothing from batching)
MAX_STACK_CAP = 64
#: the share of a GPU's free memory a stack may plan to use (the rest: the CUDA context, the
#: allocator's fragmentation, the data, the evaluation chunks)
GPU_MEMORY_SHARE = 0.6


def max_stack(job: Job | None = None) -> int:
    """How many MLP cells train together as one stack.

    ``$MONOSEM_MAX_STACK`` when set. Otherwise, on a GPU, as many networks of ``job``'s size as
    fit in :data:`GPU_MEMORY_SHARE` of the device's free memory
    (:func:`~monosem.train.step_memory_bytes`), between 1 and :data:`MAX_STACK_CAP`; 16 without a
    job. On a CPU 4: a stack runs its networks one after another there anyway, and smaller units
    spread better over a process pool."""
    env = os.environ.get("MONOSEM_MAX_STACK")
    if env:
        try:
            value = int(env)
        except ValueError:
            raise ValueError(f"MONOSEM_MAX_STACK must be a positive integer, got {env!r}") from None
        if value < 1:
            raise ValueError(f"MONOSEM_MAX_STACK must be a positive integer, got {env!r}")
        return value
    dev = get_device()
    if dev.type != "cuda":
        return 4
    if job is None:
        return 16
    # a mixture evaluates every expert's first layer (a dense layer of width E m) and keeps the
    # autograd graph of its routing besides: charged as twice a dense network of width E m
    moe = job.method.startswith("moe-")
    net = job.spec.network if moe else job.spec
    width = net.width * job.spec.n_experts if moe else net.width
    per_network = (2 if moe else 1) * step_memory_bytes(width, net.batch, net.activation, mixed_link_model(job.K).d, _dtype(job))
    free, _total = torch.cuda.mem_get_info(dev)
    return int(min(MAX_STACK_CAP, max(1, GPU_MEMORY_SHARE * free // per_network)))


def _dtype(job: Job) -> torch.dtype:
    """The job's working precision."""
    return job.data.torch_dtype


def dataset(job: Job, dtype: torch.dtype | None = None):
    """``(model, (X, y, c) train, (X, y, c) test)`` of a job (CPU tensors, in the job's precision
    unless ``dtype`` is given)."""
    spec = job.data
    dtype = dtype if dtype is not None else spec.torch_dtype
    model = spec.model()
    train = model.pool(job.n, run=job.run, device="cpu", dtype=dtype)
    # under a Zipf law the test set stays cluster-balanced (n_test / K points per cluster), so a
    # rare cluster's test MSE is measured as well as a frequent one's; the population risk under
    # the law is then sum_c pi_c MSE_c (page 09)
    test_model = model.with_weights(None) if model.weights is not None else model
    test = test_model.test_set(spec.n_test, run=job.run, device="cpu", dtype=dtype)
    return model, train, test


def _robust(pred, y, clusters=None, K: int | None = None) -> dict[str, Any]:
    """The test MSE is heavy-tailed on this data (a few points far out on the He2 link dominate):
    keep the median squared error beside the mean. With ``clusters`` (and their number ``K``),
    also every cluster's test MSE (``test_mse_by_cluster``)."""
    pred = np.asarray(pred, dtype=np.float64).reshape(-1)
    y = np.asarray(torch.as_tensor(y).double().cpu()).reshape(-1)
    sq = (pred - y) ** 2
    out: dict[str, Any] = {"test_mse": float(sq.mean()), "test_median_se": float(np.median(sq))}
    if clusters is not None:
        c = np.asarray(torch.as_tensor(clusters).cpu()).reshape(-1)
        counts = np.bincount(c, minlength=K)
        sums = np.bincount(c, weights=sq, minlength=K)
        out["test_mse_by_cluster"] = [float(v) for v in np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)]
    return out


def _per_cluster(job: Job, clusters) -> dict[str, Any]:
    """``_robust``'s cluster arguments for the cells that record the per-cluster test MSE: those
    of page 09's rare-regime sweep (their key names the Zipf exponent)."""
    return {"clusters": clusters, "K": job.K} if job.data.zipf is not None else {}


def mse(pred, y) -> float:
    return _robust(pred, y)["test_mse"]


def _by_iteration(predict, y) -> dict[str, Any]:
    """Metrics of RFM's iterations 0-3 from ``predict(iteration=t)``, each prediction made once:
    the robust pair of the last iteration (the deployable choice) and every iteration's MSE."""
    preds = [predict(iteration=t) for t in range(4)]
    by_iter = [mse(p, y) for p in preds]
    return {"preds": preds, "test_mse_by_iteration": by_iter, "test_mse_final": by_iter[-1]}


def compute_bayes(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    model, _, (Xte, yte, cte) = dataset(job, torch.float64)
    pred = model.bayes(Xte)
    excess = float(((pred - model.f_star(Xte, cte)) ** 2).mean())
    return _robust(pred.numpy(), yte, **_per_cluster(job, cte)) | {"overlap_excess": excess}


def compute_laplace(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    k = job.spec
    _, (X, y, c), (Xte, yte, _) = dataset(job)
    est = LaplaceKernelRegressor(bandwidth=k.bandwidth, **k.solver.kwargs(job.run, job.data.dtype))
    est.fit(X, y, groups=c if k.bandwidth == "cluster-median" else None)
    return _robust(est.predict(Xte), yte) | {"bandwidth": float(est.bandwidth_), "solver": str(est.solver_), "solve": _solve_summary(est.solve_info_)}


def _solve_summary(info) -> dict[str, Any]:
    """What a cell records of a kernel solve: enough to tell a converged fit from a stopped or
    diverging one (EigenPro's epochs, step halvings and final training MSE)."""
    return {"solver": info.solver, "iterations": int(info.iterations), "train_mse": float(info.train_mse),
            "converged": bool(info.converged), "step_halvings": int(info.details.get("step_halvings", 0))}


def _rfm_solves(est) -> list[dict[str, Any]]:
    """The solve of each RFM iteration (see :func:`_solve_summary`)."""
    return [{"solver": h["solver"], "iterations": int(h["solver_iterations"]), "train_mse": float(h["train_mse"]),
             "converged": bool(h["solver_converged"]), "step_halvings": int(h["solver_step_halvings"])} for h in est.history_]


def _local_solves(estimators) -> list[dict[str, Any] | list[dict[str, Any]] | None]:
    """The solve of each local estimator of an oracle or a gated predictor, in cluster (gate)
    order: one summary for a Laplace fit, one per iteration for RFM, None for an empty gate. So a
    per-cluster fit that EigenPro stopped short (its iteration limit, or a step halved away) can
    be told from a converged one, as for the global kernels."""
    out: list[dict[str, Any] | list[dict[str, Any]] | None] = []
    for est in estimators:
        if est is None:
            out.append(None)
        elif hasattr(est, "history_"):
            out.append(_rfm_solves(est))
        else:
            out.append(_solve_summary(est.solve_info_))
    return out


def compute_rfm(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    k = job.spec
    _, (X, y, c), (Xte, yte, cte) = dataset(job)
    est = RFMRegressor(iterations=3, bandwidth=k.bandwidth, agop_samples=k.agop_samples, **k.solver.kwargs(job.run, job.data.dtype))
    est.fit(X, y, groups=c if k.bandwidth == "cluster-median" else None)
    its = _by_iteration(lambda iteration: est.predict(Xte, iteration=iteration), yte)
    best = int(np.argmin(its["test_mse_by_iteration"]))
    # the paper's displayed curve is the best of iterations 0-3 (an optimistic envelope)
    return _robust(its.pop("preds")[best], yte, **_per_cluster(job, cte)) | its | {"best_iteration": best, "solves": _rfm_solves(est)}


def fit_oracle(job: Job):
    """The per-cluster oracle of an ``oracle-*`` cell fitted on its training set, and the cell's
    test set ``(Xte, yte, cte)``."""
    k = job.spec
    solver = k.solver.kwargs(job.run, job.data.dtype)
    _, (X, y, c), test = dataset(job)
    if job.method == "oracle-laplace":
        base = LaplaceKernelRegressor(bandwidth="median", **solver)
    else:
        base = RFMRegressor(iterations=3, bandwidth="median", agop_samples=k.agop_samples, **solver)
    largest = int(torch.bincount(torch.as_tensor(c)).max())
    if largest >= k.solver.exact_max_n and k.solver.eigenpro_revision is None:
        raise RuntimeError(f"{job.label()}: a cluster of {largest} examples is solved by EigenPro, but the job's key does not name "
                           "the EigenPro revision (the bound of monosem.experiments.sweeps.may_run_eigenpro is wrong)")
    return PerClusterOracle(base).fit(X, y, groups=c), test


def compute_oracle(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    oracle, (Xte, yte, cte) = fit_oracle(job)
    solves = {"local_solves": _local_solves(oracle.estimators_[k] for k in oracle.clusters_.tolist())}
    if job.method == "oracle-laplace":
        return _robust(oracle.predict(Xte, groups=cte), yte, **_per_cluster(job, cte)) | solves
    its = _by_iteration(lambda iteration: oracle.predict(Xte, groups=cte, iteration=iteration), yte)
    return _robust(its.pop("preds")[-1], yte, **_per_cluster(job, cte)) | its | solves


# ------------------------------------------------------------------------------------- MLPs
def _model_path(cache: ResultCache | None, job: Job) -> Path | None:
    """Where a job's trained network is written (beside the cache)."""
    return None if cache is None else cache.root / "models" / f"{job.key()}.pt"


def _saved_network(cache: ResultCache, job: Job) -> tuple[Path, str] | None:
    """The file holding a job's trained network and the key it must carry: under the current
    key, else under the key spelled before the specs were typed (:mod:`.legacy`)."""
    path = _model_path(cache, job)
    if path.exists():
        return path, job.key()
    old = job_key(legacy_config(job))
    path = cache.root / "models" / f"{old}.pt"
    return (path, old) if path.exists() else None


def load_mlp(job: Job, cache: ResultCache, device=None) -> MLP:
    """The trained network of an ``mlp-*`` job from the cache (no pickle: weights_only=True).

    The file carries its job's key; an unreadable file, one of another job or one whose tensors
    do not fit the job's architecture is moved aside (``*.corrupt``, with a warning) and
    ``FileNotFoundError`` raised, so that the caller retrains that one network."""
    net = job.spec
    return load_network(job, cache, MLP(MIXED_LINK_D, net.width, net.activation, seed=model_seed(job.run), device=device), "network")


def load_network(job: Job, cache: ResultCache, net, what: str):
    """``net`` (a fresh module of the job's architecture) holding the job's saved tensors, or
    ``FileNotFoundError`` after moving a damaged file aside: the loader of :func:`load_mlp` and
    :func:`load_moe`."""
    found = _saved_network(cache, job)
    if found is None:
        raise FileNotFoundError(f"no trained {what} for {job.label()} in {cache.root}")
    path, expected = found
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        key = state.pop("key", None) if isinstance(state, dict) else None
        if key is not None and key != expected:
            raise ValueError(f"it holds the {what} of job {key}, not {expected}")
        if not isinstance(state, dict) or set(state) != set(net.param_names):
            raise ValueError(f"not a saved {what}")
        net = net.to(state["W"].dtype)
        with torch.no_grad():
            for name, value in state.items():
                if getattr(net, name).shape != value.shape:
                    raise ValueError(f"{name} has shape {tuple(value.shape)}, the job's {what} {tuple(getattr(net, name).shape)}")
                getattr(net, name).copy_(value)
    except Exception as err:  # noqa: BLE001 - whatever torch.load raises on a damaged file
        # said of every reader: a computation trains it again, a plot or a status does not
        quarantine(path, str(err) or type(err).__name__, then=f"the {what} counts as missing (a run trains it again)")
        raise FileNotFoundError(f"no usable trained {what} for {job.label()}") from err
    return net


def save_network(cache: ResultCache | None, job: Job, net) -> None:
    """Store a trained network (its tensors and its job's key) beside the cache, atomically."""
    path = _model_path(cache, job)
    if path is not None:
        atomic_torch_save({"key": job.key()} | {name: getattr(net, name).detach().cpu() for name in net.param_names}, path)


def _stack_inputs(jobs: list[Job], cache: ResultCache | None):
    """What a stack of network cells trains on: per job its data model and test set, the stacked
    training pools (model i on the first n_i examples of its run's pool), and the checkpoint file
    beside the cache (``None`` without a cache), so that an interrupted run resumes the stack."""
    n_max = max(j.n for j in jobs)
    # one pool of n_max examples per (K, run): the cells of smaller n train on its prefixes
    sets = {(j.K, j.run): dataset(j.on(n=n_max)) for j in jobs}
    models = [sets[(j.K, j.run)][0] for j in jobs]
    pools = [sets[(j.K, j.run)][1] for j in jobs]
    tests = [sets[(j.K, j.run)][2] for j in jobs]
    data = TrainData(torch.stack([X for X, _, _ in pools]), torch.stack([y for _, y, _ in pools]), n_used=tuple(j.n for j in jobs))
    ckpt = None
    if cache is not None:
        tag = hashlib.sha256("".join(j.key() for j in jobs).encode()).hexdigest()[:16]
        ckpt = cache.root / "checkpoints" / f"{tag}.pt"
        ckpt.parent.mkdir(parents=True, exist_ok=True)
    return models, tests, data, ckpt


def _training_metrics(result, i: int, config: TrainConfig, stack_size: int) -> dict[str, Any]:
    """Model ``i``'s training record: the kept checkpoint's training MSE and step, where and why
    it stopped, its training-MSE curve up to the stop (a few hundred numbers), the stack's speed."""
    curve = result.history["train_mse"][:, i]
    steps = result.history["step"]
    ran = steps <= int(result.stop_step[i])
    return {
        "train_mse": float(result.best_value[i]),
        "best_step": int(result.best_step[i]),
        "stop_step": int(result.stop_step[i]),
        "stop_reason": stop_reason(curve[ran], int(result.stop_step[i]), config),
        "train_curve": [[int(t), float(v)] for t, v in zip(steps[ran], curve[ran])],
        "stack_size": stack_size,
        "stack_steps_per_second": float(result.steps_per_second),
        # the time of a resumed run's earlier sittings, which the cache adds to the cell's timing
        # (a model's share of the stack's, like the timing of this sitting)
        EARLIER_SECONDS: result.earlier_seconds / stack_size,
        EARLIER_CPU_SECONDS: result.earlier_cpu_seconds / stack_size,
    }


def train_mlps(jobs: list[Job], cache: ResultCache | None) -> list[dict[str, Any]]:
    """Train the MLP cells ``jobs`` (same method and settings) as one stack (Appendix A.2).

    Model i is initialized with seed 1000 + r (the paper's model seed for run r), trained on the
    first n_i examples of its run's training pool, and evaluated on its run's test set.
    """
    net = jobs[0].spec
    dev = get_device()
    models, tests, data, ckpt = _stack_inputs(jobs, cache)
    config = net.train_config()
    stack = MLPStack(MIXED_LINK_D, net.width, net.activation, [model_seed(j.run) for j in jobs], device=dev, dtype=_dtype(jobs[0]))
    result = train(stack, data, config, checkpoint=ckpt, progress=True, desc=f"{jobs[0].method} x {len(jobs)}")
    out = []
    for i, (job, mlp) in enumerate(zip(jobs, result.models())):
        Xte, yte, cte = tests[i]
        with torch.no_grad():
            pred = mlp(Xte.to(dev, mlp.W.dtype)).double().cpu().numpy()
        save_network(cache, job, mlp)
        out.append(_robust(pred, yte, **_per_cluster(job, cte)) | _training_metrics(result, i, config, len(jobs))
                   | _specialization(mlp, models[i], by_cluster=job.data.zipf is not None))
    if ckpt is not None and ckpt.exists():
        ckpt.unlink()  # the results and networks are stored; the checkpoint has done its job
    return out


# ------------------------------------------------------------------- mixtures of experts
def _moe_of(job: Job, device=None) -> MoE:
    """A fresh (untrained) mixture of a ``moe-*`` job's architecture: E = ``n_experts`` experts
    of width ``width``, initialized from the run's model seed 1000 + r, as the MLP cells."""
    moe = job.spec
    return MoE(MIXED_LINK_D, moe.network.width, moe.network.activation, moe.n_experts, seed=model_seed(job.run), aux_weight=moe.aux_weight,
               router_scale=moe.router_scale, device=device)


def load_moe(job: Job, cache: ResultCache, device=None) -> MoE:
    """The trained mixture of a ``moe-*`` job from the cache (no pickle: weights_only=True).

    As :func:`load_mlp`: the file carries its job's key; an unreadable file, one of another job or
    one whose tensors do not fit the job's architecture is moved aside (``*.corrupt``, with a
    warning) and ``FileNotFoundError`` raised, so that the caller retrains that one mixture
    (:func:`trained_moe`)."""
    return load_network(job, cache, _moe_of(job, device), "mixture")


def trained_moe(job: Job, cache: ResultCache) -> MoE:
    """The trained mixture of a ``moe-*`` job: loaded from the cache, or (never trained, or its
    file damaged and moved aside by :func:`load_moe`) trained again, its record rewritten and
    its network saved, as a gated cell retrains a damaged source network."""
    try:
        if not cache.has(job):
            raise FileNotFoundError(job.label())
        return load_moe(job, cache)
    except FileNotFoundError:
        t0, c0 = time.perf_counter(), time.process_time()
        (metrics,) = _train_moes([job], cache)
        cache.save(job, metrics, time.perf_counter() - t0, device=str(get_device()), cpu_seconds=time.process_time() - c0)
        return load_moe(job, cache)


def _train_moes(jobs: list[Job], cache: ResultCache | None) -> list[dict[str, Any]]:
    """Train the mixture-of-experts cells ``jobs`` (same method and settings) as one
    :class:`~monosem.models.MoEStack`, exactly as :func:`train_mlps` trains MLP cells: model i
    from seed 1000 + r on the first n_i examples of its run's pool, the A.2 protocol of its key
    (the objective: MSE + ``aux_weight`` x the Switch Transformer's load-balancing loss; the
    reported and stopping MSE: plain), periodic checkpoints beside the cache.

    Recorded besides the MLP cells' training metrics: the router's adjusted Rand index against the
    true clusters on the test set (``router_ari``; ``sklearn.metrics.adjusted_rand_score``),
    the share of test points each expert receives (``expert_load``), and the mixture's parameter
    count and routed forward FLOPs per example (:func:`~monosem.models.parameter_count`,
    :func:`~monosem.models.forward_flops`).
    """
    from sklearn.metrics import adjusted_rand_score

    moe_spec = jobs[0].spec
    net = moe_spec.network
    dev = get_device()
    _, tests, data, ckpt = _stack_inputs(jobs, cache)
    config = net.train_config()
    stack = MoEStack(MIXED_LINK_D, net.width, net.activation, moe_spec.n_experts, [model_seed(j.run) for j in jobs],
                     aux_weight=moe_spec.aux_weight, router_scale=moe_spec.router_scale, device=dev, dtype=_dtype(jobs[0]))
    result = train(stack, data, config, checkpoint=ckpt, progress=True, desc=f"{jobs[0].method} E={moe_spec.n_experts} x {len(jobs)}")
    out = []
    for i, (job, moe) in enumerate(zip(jobs, result.models())):
        Xte, yte, cte = tests[i]
        with torch.no_grad():
            x = Xte.to(dev, moe.W.dtype)
            pred = moe(x).double().cpu().numpy()
            route = moe.route(x).cpu()
        save_network(cache, job, moe)
        load = torch.bincount(route, minlength=moe.n_experts).double() / route.numel()
        out.append(_robust(pred, yte) | _training_metrics(result, i, config, len(jobs)) | {
            "router_ari": float(adjusted_rand_score(cte.numpy(), route.numpy())),
            "expert_load": [float(v) for v in load],
            "n_parameters": int(moe.n_parameters()),
            "forward_flops": int(moe.forward_flops()),
        })
    if ckpt is not None and ckpt.exists():
        ckpt.unlink()
    return out


def _specialization(mlp: MLP, model, by_cluster: bool = False) -> dict[str, Any]:
    """Figure 1's alignment statistics of a trained network against its data model's predictive
    directions (eq. 1), on the first branch (the ReLU / GELU units, or a gated net's gate): how
    many neurons are active and which fraction of them is specialized (A_j >= 0.71, >= 0.90).
    The dominance D_j needs axis-aligned directions, which the mixed-link model does not have.
    ``by_cluster``: also how many specialized neurons (A_j >= 0.71) serve each cluster, i.e. have
    it as their maximizing c_j (page 09's rare regimes)."""
    act = active_set(importance(mlp))
    W = next(iter(mlp.branches().values()))[act.to(mlp.W.device)]
    extra = {"aligned_by_cluster": [0] * model.K, "specialized_by_cluster": [0] * model.K} if by_cluster else {}
    if W.shape[0] == 0:
        return {"n_active": 0, "frac_A071": float("nan"), "frac_A090": float("nan")} | extra
    A, c = alignment(W.double().cpu(), model.directions)
    if by_cluster:
        # every active neuron by its best-aligned cluster c_j, and the specialized ones among them
        extra = {"aligned_by_cluster": [int(v) for v in torch.bincount(c, minlength=model.K)],
                 "specialized_by_cluster": [int(v) for v in torch.bincount(c[A >= 0.71], minlength=model.K)]}
    return {"n_active": int(W.shape[0]), "frac_A071": float((A >= 0.71).double().mean()),
            "frac_A090": float((A >= 0.90).double().mean())} | extra


def specialization_metrics(job: Job, cache: ResultCache) -> dict[str, Any]:
    """:func:`_specialization` of an ``mlp-*`` cell's saved network (for cells cached before
    their results recorded it). ``FileNotFoundError`` when the network is not in the cache."""
    return _specialization(load_mlp(job, cache), dataset(job)[0])


def stop_reason(curve: torch.Tensor, stop_step: int, config: TrainConfig) -> str:
    """Why an A.2 run ended, from its training-MSE curve up to ``stop_step``: ``"target"`` (the
    last evaluation reached the target MSE), ``"diverged"`` (it is not finite), ``"plateau"``
    (stopped early otherwise) or ``"cap"`` (ran to ``max_steps``)."""
    last = float(curve[-1]) if len(curve) else float("nan")
    if not np.isfinite(last):
        return "diverged"
    if stop_step >= config.min_steps and last <= config.target_mse:
        return "target"
    return "cap" if stop_step >= config.max_steps else "plateau"


# ------------------------------------------------------------------------- MLP-gated kernels
#: page 09's swapped pipelines, (routing, features) of :class:`~monosem.gating.MLPGatedRegressor`
#: with Laplace local models: learned gates without the learned metric, and true-cluster routing
#: with it (the paper's ``gated-laplace`` is (learned, learned); ``oracle-laplace`` is (true, isotropic))
SWAPS = {"gated-laplace-iso": ("learned", "isotropic"), "oracle-laplace-gc": ("true", "learned")}


def source_job(job: Job) -> Job:
    """The MLP cell whose network a gated cell routes with: its source ReLU network on its data."""
    return Job("mlp-relu", job.data, job.spec.source, job.profile)


def networks_to_retrain(jobs: list[Job], cache: ResultCache) -> list[Job]:
    """The source networks that the gated cells among ``jobs`` would train before they run: those
    whose weights are not in ``cache`` (a recorded or restored cell carries its network's metrics,
    never its weights) and that ``jobs`` do not already list."""
    listed = set(jobs)
    sources = (source_job(j) for j in jobs if _COMPUTE.get(j.method) is compute_gated)
    return [src for src in dict.fromkeys(sources) if src not in listed and _saved_network(cache, src) is None]


def trained_mlp(src: Job, cache: ResultCache) -> MLP:
    """The trained network of the ``mlp-*`` cell ``src``: from ``cache``, else trained now (its
    result stored in ``cache`` too, as the runner would)."""
    try:
        if not cache.has(src):
            raise FileNotFoundError(src.label())
        return load_mlp(src, cache)
    except FileNotFoundError:  # never trained, or its file was damaged and moved aside
        t0, c0 = time.perf_counter(), time.process_time()
        (metrics,) = train_mlps([src], cache)
        cache.save(src, metrics, time.perf_counter() - t0, device=str(get_device()), cpu_seconds=time.process_time() - c0)
        return load_mlp(src, cache)


def per_cluster_mse(pred, y, clusters, K: int) -> list[float]:
    """Every cluster's test MSE (NaN for a cluster without test points)."""
    return _robust(pred, y, clusters, K)["test_mse_by_cluster"]


def specialization(mlp: MLP, model) -> dict[str, Any]:
    """:func:`_specialization` with the per-cluster counts: Figure 1's alignment statistics and,
    per cluster, how many active neurons have it as their best-aligned cluster and how many of
    those are specialized (A_j >= 0.71)."""
    return _specialization(mlp, model, by_cluster=True)


def compute_gated(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    gated = job.spec
    src = source_job(job)
    if cache is None:
        cache = ResultCache(tempfile.mkdtemp(prefix="monosem-"))
    mlp = trained_mlp(src, cache)
    _, (X, y, c), (Xte, yte, cte) = dataset(job)
    local = "rfm" if job.method == "gated-rfm" else "laplace"
    # page 09's swaps: the same pipeline with true-cluster routing or without the learned metric
    routing, features = SWAPS.get(job.method, ("learned", "learned"))
    est = MLPGatedRegressor(mlp, local=local, n_gates=job.K, n_init=gated.n_init, max_iter=gated.max_iter,
                            local_params=gated.local.solver.kwargs(job.run, job.data.dtype) | ({"agop_samples": gated.local.agop_samples} if local == "rfm" else {}),
                            random_state=job.run, routing=routing, features=features).fit(X, y, clusters=c)
    # route the test points once (by their true clusters under true routing)
    gates = est.assign(Xte) if routing == "learned" else cte.numpy()
    out = {
        "gate_ari_train": est.gate_purity(X, c, gates=est.train_gates_),
        "gate_ari_test": est.gate_purity(Xte, cte, gates=gates),
        "active_neurons": int(len(est.active_)),
        "local_solves": _local_solves(est.estimators_),
    }
    if local == "laplace":
        return _robust(est.predict(Xte, gates=gates), yte) | out
    its = _by_iteration(lambda iteration: est.predict(Xte, iteration=iteration, gates=gates), yte)
    return _robust(its.pop("preds")[-1], yte) | {"test_mse_by_iteration": its["test_mse_by_iteration"]} | out


_COMPUTE = {
    "bayes": compute_bayes,
    "laplace": compute_laplace,
    "rfm": compute_rfm,
    "oracle-laplace": compute_oracle,
    "oracle-rfm": compute_oracle,
    "gated-laplace": compute_gated,
    "gated-rfm": compute_gated,
    "gated-laplace-iso": compute_gated,
    "oracle-laplace-gc": compute_gated,
}


def compute(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    """Compute one job's metrics (dispatch on ``job.method``)."""
    return compute_many([job], cache=cache)[0]


def compute_many(jobs: list[Job], cache: ResultCache | None = None) -> list[dict[str, Any]]:
    """Compute a batch from :func:`plan`: MLP cells of one method train as one stack."""
    if not jobs:
        return []
    if jobs[0].method.startswith(("mlp-", "moe-")):
        if any(_stack_key(j) != _stack_key(jobs[0]) for j in jobs):
            raise ValueError("a batch of MLP or mixture-of-experts cells must share the method, every setting and the data model")
        out = (train_mlps if jobs[0].method.startswith("mlp-") else _train_moes)(jobs, cache)
    else:
        out = []
        for job in jobs:
            fn = _COMPUTE.get(job.method) or (METHODS[job.method].compute if job.method in METHODS else None)
            if fn is None:
                raise ValueError(f"method={job.method!r} cannot be computed; known: {sorted(_COMPUTE) + sorted(METHODS)}, mlp-* and moe-*")
            out.append(fn(job, cache))
    return out


def _stack_key(job: Job) -> tuple:
    """What the networks of one stack share: the method, its spec, and the data model and test
    set (everything of the data but K, n and run: a stack draws one pool per (K, run) and trains
    model i on its first n_i examples)."""
    data = dataclasses.replace(job.data, K=0, n=0, run=0)
    return job.method, job.spec, data


def plan(jobs: list[Job]) -> list[list[Job]]:
    """Batches for :func:`compute_many`: MLP cells with the same method and settings are stacked
    (at most :func:`max_stack` per stack, largest n first), before the gated cells that need them;
    mixture-of-experts cells likewise; every other cell is on its own."""
    groups: dict[tuple, list[Job]] = defaultdict(list)
    others = []
    for job in jobs:
        if job.method.startswith(("mlp-", "moe-")):
            groups[(*_stack_key(job), job.profile)].append(job)
        else:
            others.append(job)
    batches = []
    for members in groups.values():
        members = sorted(members, key=lambda j: (-j.n, j.K, j.run))
        size = max_stack(members[0])
        batches += [members[i : i + size] for i in range(0, len(members), size)]
    return batches + [[job] for job in sorted(others, key=lambda j: j.method.startswith("gated-"))]
