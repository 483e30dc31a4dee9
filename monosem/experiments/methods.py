"""What one job computes, for every method: its data, its metrics, its stored networks, its batches.

Each method's computation is registered with it (:mod:`.registry`; the built-in families in
:mod:`monosem.experiments.families`); this module is what they share. All methods of one
(K, n, run) use exactly the same training and test tensors (Appendix A.2): the nested training
pool of seed 12345 + r and the test set of seed 54321 + r of ``mixed_link_model(K, run=r)``,
read through :func:`dataset`. :func:`compute_many` computes a batch of :func:`plan`: the network
cells of one method and settings train as one stack (the method's ``train_many``), the cells
that read a trained network after it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..atomic import atomic_torch_save, quarantine
from ..device import get_device
from ..models import MLP
from ..specialization import active_set, alignment, importance, predictive_alignment
from ..train import TrainConfig, TrainData, step_memory_bytes
from .cache import EARLIER_CPU_SECONDS, EARLIER_SECONDS, Job, ResultCache
from .specs import MixtureSpec
from .registry import method_of

__all__ = ["compute", "compute_many", "plan", "dataset", "mse", "metrics", "cluster_args", "by_iteration", "solve_summary",
           "rfm_solves", "local_solves", "per_cluster_mse", "specialization", "max_stack", "stop_reason", "networks_to_retrain",
           "stack_inputs", "training_metrics", "load_network", "save_network", "saved_network"]


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
    moe = isinstance(job.spec, MixtureSpec)
    net = job.spec.network if moe else job.spec
    width = net.width * job.spec.n_experts if moe else net.width
    per_network = (2 if moe else 1) * step_memory_bytes(width, net.batch, net.activation, job.data.model().d, job.data.torch_dtype)
    free, _total = torch.cuda.mem_get_info(dev)
    return int(min(MAX_STACK_CAP, max(1, GPU_MEMORY_SHARE * free // per_network)))


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


def metrics(pred, y, clusters=None, K: int | None = None) -> dict[str, Any]:
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


def cluster_args(job: Job, clusters) -> dict[str, Any]:
    """``metrics``'s cluster arguments for the cells that record the per-cluster test MSE: those
    of page 09's rare-regime sweep (their key names the Zipf exponent)."""
    return {"clusters": clusters, "K": job.K} if job.data.zipf is not None else {}


def mse(pred, y) -> float:
    return metrics(pred, y)["test_mse"]


def by_iteration(predict, y) -> dict[str, Any]:
    """Metrics of RFM's iterations 0-3 from ``predict(iteration=t)``, each prediction made once:
    the robust pair of the last iteration (the deployable choice) and every iteration's MSE."""
    preds = [predict(iteration=t) for t in range(4)]
    by_iter = [mse(p, y) for p in preds]
    return {"preds": preds, "test_mse_by_iteration": by_iter, "test_mse_final": by_iter[-1]}


def solve_summary(info) -> dict[str, Any]:
    """What a cell records of a kernel solve: enough to tell a converged fit from a stopped or
    diverging one (EigenPro's epochs, step halvings and final training MSE)."""
    return {"solver": info.solver, "iterations": int(info.iterations), "train_mse": float(info.train_mse),
            "converged": bool(info.converged), "step_halvings": int(info.details.get("step_halvings", 0))}


def rfm_solves(est) -> list[dict[str, Any]]:
    """The solve of each RFM iteration (see :func:`solve_summary`)."""
    return [{"solver": h["solver"], "iterations": int(h["solver_iterations"]), "train_mse": float(h["train_mse"]),
             "converged": bool(h["solver_converged"]), "step_halvings": int(h["solver_step_halvings"])} for h in est.history_]


def local_solves(estimators) -> list[dict[str, Any] | list[dict[str, Any]] | None]:
    """The solve of each local estimator of an oracle or a gated predictor, in cluster (gate)
    order: one summary for a Laplace fit, one per iteration for RFM, None for an empty gate. So a
    per-cluster fit that EigenPro stopped short (its iteration limit, or a step halved away) can
    be told from a converged one, as for the global kernels."""
    out: list[dict[str, Any] | list[dict[str, Any]] | None] = []
    for est in estimators:
        if est is None:
            out.append(None)
        elif hasattr(est, "history_"):
            out.append(rfm_solves(est))
        else:
            out.append(solve_summary(est.solve_info_))
    return out



# ------------------------------------------------------------------------ stored networks
def _model_path(cache: ResultCache | None, job: Job) -> Path | None:
    """Where a job's trained network is written (beside the cache)."""
    return None if cache is None else cache.root / "models" / f"{job.key()}.pt"


def saved_network(cache: ResultCache, job: Job) -> tuple[Path, str] | None:
    """The file holding a job's trained network and the key it must carry (a network saved under
    a key of cache versions 1 and 2 is moved to its typed key by ``python scripts/migrate_recorded.py
    --cache PATH``, with its cell)."""
    path = _model_path(cache, job)
    return (path, job.key()) if path.exists() else None


def load_network(job: Job, cache: ResultCache, net, what: str):
    """``net`` (a fresh module of the job's architecture) holding the job's saved tensors, or
    ``FileNotFoundError`` after moving a damaged file aside: the loader of every network family's loader."""
    found = saved_network(cache, job)
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


def stack_inputs(jobs: list[Job], cache: ResultCache | None):
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


def training_metrics(result, i: int, config: TrainConfig, stack_size: int) -> dict[str, Any]:
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


def specialization(mlp: MLP, model, by_cluster: bool = False) -> dict[str, Any]:
    """Figure 1's alignment statistics of a trained network against its data model's predictive
    directions (eq. 1), on the first branch (the ReLU / GELU units, or a gated net's gate): how
    many neurons are active and which fraction of them is specialized (A_j >= 0.71, >= 0.90).
    The dominance D_j needs axis-aligned directions, which the mixed-link model does not have.
    ``by_cluster``: also how many active neurons have each cluster as their best-aligned c_j and
    how many of those are specialized (A_j >= 0.71) (page 09's rare regimes). Beside eq. (1), the
    same within the predictive coordinates (:func:`~monosem.specialization.predictive_alignment`:
    the specialized share, the medians of both cosines and of the weight's share off them)."""
    act = active_set(importance(mlp))
    W = next(iter(mlp.branches().values()))[act.to(mlp.W.device)]
    extra = {"aligned_by_cluster": [0] * model.K, "specialized_by_cluster": [0] * model.K,
             "specialized_predictive_by_cluster": [0] * model.K} if by_cluster else {}
    if W.shape[0] == 0:
        nan = float("nan")
        return {"n_active": 0, "frac_A071": nan, "frac_A090": nan, "frac_A071_predictive": nan, "median_A": nan,
                "median_A_predictive": nan, "median_off_predictive_norm": nan} | extra
    A, c = alignment(W.double().cpu(), model.directions)
    A_pred, c_pred, off = predictive_alignment(W.double().cpu(), model.directions)
    within = {"frac_A071_predictive": float((A_pred >= 0.71).double().mean()), "median_A": float(A.median()),
              "median_A_predictive": float(A_pred.median()), "median_off_predictive_norm": float(off.median())}
    if by_cluster:
        # every active neuron by its best-aligned cluster c_j, and the specialized ones among them
        extra = {"aligned_by_cluster": [int(v) for v in torch.bincount(c, minlength=model.K)],
                 "specialized_by_cluster": [int(v) for v in torch.bincount(c[A >= 0.71], minlength=model.K)],
                 "specialized_predictive_by_cluster": [int(v) for v in torch.bincount(c_pred[A_pred >= 0.71], minlength=model.K)]}
    return {"n_active": int(W.shape[0]), "frac_A071": float((A >= 0.71).double().mean()),
            "frac_A090": float((A >= 0.90).double().mean())} | within | extra


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


def per_cluster_mse(pred, y, clusters, K: int) -> list[float]:
    """Every cluster's test MSE (NaN for a cluster without test points)."""
    return metrics(pred, y, clusters, K)["test_mse_by_cluster"]


def networks_to_retrain(jobs: list[Job], cache: ResultCache) -> list[Job]:
    """The source networks that cells among ``jobs`` read (their method's ``sources``, e.g. a gated
    cell's ReLU network) and would train before they run: those whose weights are not in
    ``cache`` (a recorded or restored cell carries its network's metrics, never its weights) and
    that ``jobs`` do not already list."""
    listed = set(jobs)
    sources = (src for j in jobs if method_of(j.method).sources is not None for src in method_of(j.method).sources(j))
    return [src for src in dict.fromkeys(sources) if src not in listed and saved_network(cache, src) is None]


def compute(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    """Compute one job's metrics (its registered method's computation)."""
    return compute_many([job], cache=cache)[0]


def compute_many(jobs: list[Job], cache: ResultCache | None = None) -> list[dict[str, Any]]:
    """Compute a batch from :func:`plan`: network cells of one method and settings train as one
    stack (the method's ``train_many``), every other cell on its own."""
    if not jobs:
        return []
    method = method_of(jobs[0].method)
    if method.train_many is not None:
        if any(_stack_key(j) != _stack_key(jobs[0]) for j in jobs):
            raise ValueError("a batch of network cells must share the method, every setting and the data model")
        return method.train_many(jobs, cache)
    return [method_of(job.method).compute(job, cache) for job in jobs]


def _stack_key(job: Job) -> tuple:
    """What the networks of one stack share: the method, its spec, and the data model and test
    set (everything of the data but K, n and run: a stack draws one pool per (K, run) and trains
    model i on its first n_i examples)."""
    data = dataclasses.replace(job.data, K=0, n=0, run=0)
    return job.method, job.spec, data


def plan(jobs: list[Job]) -> list[list[Job]]:
    """Batches for :func:`compute_many`: network cells with the same method and settings are
    stacked (at most :func:`max_stack` per stack, largest n first), before the cells that read a
    trained network; every other cell is on its own."""
    groups: dict[tuple, list[Job]] = defaultdict(list)
    others = []
    for job in jobs:
        if method_of(job.method).train_many is not None:
            groups[(*_stack_key(job), job.profile)].append(job)
        else:
            others.append(job)
    batches = []
    for members in groups.values():
        members = sorted(members, key=lambda j: (-j.n, j.K, j.run))
        size = max_stack(members[0])
        batches += [members[i : i + size] for i in range(0, len(members), size)]
    return batches + [[job] for job in sorted(others, key=lambda j: method_of(j.method).sources is not None)]
