"""The networks of Figures 2 and 6: a one-hidden-layer MLP of each activation trained by the
Appendix A.2 protocol, ``mlp-<activation>``, its cells of one setting trained as one stack."""

from __future__ import annotations

import time
from typing import Any

import torch

from ...data import model_seed
from ...device import get_device
from ...models import ACTIVATIONS, MLP, MLPStack
from ...profiles import Profile, SampleEfficiencySizes
from ...train import A2_FINAL_LR_RATIO, A2_MIN_REL_IMPROVEMENT, LR_A2, train
from ..cache import Job, ResultCache
from ..specs import MIXED_LINK_D, NetworkSpec
from ..methods import cluster_args, dataset, load_network, metrics, save_network, specialization, stack_inputs, training_metrics
from ..registry import register_method

__all__ = ["network_method", "MLP_RELU", "MLP_GELU", "MLP_REGLU", "MLP_SWIGLU", "NETWORKS", "network_spec", "train_mlps", "load_mlp",
           "trained_mlp", "specialization_metrics"]


def network_method(activation: str) -> str:
    """The method name of the MLP of ``activation``."""
    return f"mlp-{activation}"


MLP_RELU, MLP_GELU, MLP_REGLU, MLP_SWIGLU = (network_method(a) for a in ("relu", "gelu", "reglu", "swiglu"))
#: every network method, by activation
NETWORKS = {act: network_method(act) for act in ACTIVATIONS}

#: Figure 2's line styles of the networks
STYLES = {
    "relu": dict(color="tab:blue", marker="o", label="ReLU MLP"),
    "gelu": dict(color="tab:cyan", marker="v", label="GELU MLP"),
    "reglu": dict(color="tab:red", marker="s", label="ReGLU MLP"),
    "swiglu": dict(color="tab:pink", marker="D", label="SwiGLU MLP"),
}


def network_spec(act: str, width: int, batch: int, se: SampleEfficiencySizes, P: Profile) -> NetworkSpec:
    """The A.2 protocol of a network of activation ``act`` at (width, batch) on the grid ``se``."""
    return NetworkSpec(activation=act, width=int(width), batch=int(batch), lr=LR_A2[act], final_lr=LR_A2[act] * A2_FINAL_LR_RATIO,
                       min_steps=se.min_steps, max_steps=se.max_steps, eval_every=se.eval_every, patience_evals=se.patience_evals,
                       min_rel_improvement=A2_MIN_REL_IMPROVEMENT, step_revision=int(P.step_revision))


def _params(act: str):
    """The spec maker of ``mlp-<act>``: ``network`` is the (width, batch) of the cell (default:
    the grid's)."""
    def params(P: Profile, se: SampleEfficiencySizes, network: tuple[int, int] | None = None) -> NetworkSpec:
        width, batch = network if network is not None else (se.width, se.batch)
        return network_spec(act, width, batch, se, P)
    return params


def train_mlps(jobs: list[Job], cache: ResultCache | None) -> list[dict[str, Any]]:
    """Train the MLP cells ``jobs`` (same method and settings) as one stack (Appendix A.2).

    Model i is initialized with seed 1000 + r (the paper's model seed for run r), trained on the
    first n_i examples of its run's training pool, and evaluated on its run's test set.
    """
    net = jobs[0].spec
    dev = get_device()
    models, tests, data, ckpt = stack_inputs(jobs, cache)
    config = net.train_config()
    stack = MLPStack(MIXED_LINK_D, net.width, net.activation, [model_seed(j.run) for j in jobs], device=dev, dtype=jobs[0].data.torch_dtype,
                     **net.start.stack_kwargs())
    net.start.scale_values(stack, net.activation)
    result = train(stack, data, config, checkpoint=ckpt, progress=True, desc=f"{jobs[0].method} x {len(jobs)}")
    out = []
    for i, (job, mlp) in enumerate(zip(jobs, result.models())):
        Xte, yte, cte = tests[i]
        with torch.no_grad():
            pred = mlp(Xte.to(dev, mlp.W.dtype)).double().cpu().numpy()
        save_network(cache, job, mlp)
        out.append(metrics(pred, yte, **cluster_args(job, cte)) | training_metrics(result, i, config, len(jobs))
                   | specialization(mlp, models[i], by_cluster=job.data.zipf is not None))
    if ckpt is not None and ckpt.exists():
        ckpt.unlink()  # the results and networks are stored; the checkpoint has done its job
    return out


def _compute(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    return train_mlps([job], cache)[0]


def load_mlp(job: Job, cache: ResultCache, device=None) -> MLP:
    """The trained network of an ``mlp-*`` job from the cache (no pickle: weights_only=True).

    The file carries its job's key; an unreadable file, one of another job or one whose tensors
    do not fit the job's architecture is moved aside (``*.corrupt``, with a warning) and
    ``FileNotFoundError`` raised, so that the caller retrains that one network."""
    net = job.spec
    return load_network(job, cache, MLP(MIXED_LINK_D, net.width, net.activation, seed=model_seed(job.run), device=device,
                                        **net.start.stack_kwargs()), "network")


def trained_mlp(src: Job, cache: ResultCache) -> MLP:
    """The trained network of the ``mlp-*`` cell ``src``: from ``cache``, else trained now (its
    result stored in ``cache`` too, as the runner would)."""
    try:
        if not cache.has(src):
            raise FileNotFoundError(src.label())
        return load_mlp(src, cache)
    except FileNotFoundError:  # never trained, or its file was damaged and moved aside
        t0, c0 = time.perf_counter(), time.process_time()
        (result,) = train_mlps([src], cache)
        cache.save(src, result, time.perf_counter() - t0, device=str(get_device()), cpu_seconds=time.process_time() - c0)
        return load_mlp(src, cache)


def specialization_metrics(job: Job, cache: ResultCache) -> dict[str, Any]:
    """:func:`~..methods.specialization` of an ``mlp-*`` cell's saved network (for cells cached
    before their results recorded it). ``FileNotFoundError`` when the network is not in the cache."""
    return specialization(load_mlp(job, cache), dataset(job)[0])


for _act, _name in NETWORKS.items():
    register_method(_name, params=_params(_act), compute=_compute, train_many=train_mlps, style=STYLES.get(_act, {}))
