"""The explicit mixtures of experts of page 10 (beyond the paper): a top-1 mixture of E ReLU
experts of width m with a learned router (Switch Transformer routing, Fedus, Zoph & Shazeer 2022),
``moe-<activation>``, trained by the Appendix A.2 protocol of its experts' activation plus the
load-balancing loss; its cells of one setting train as one stack. The expert width m and the
dense widths it is matched to (by parameters, by forward FLOPs) are rules of the profile's
``moe`` grid (:class:`~monosem.profiles.MoESizes`)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import torch

from ...data import model_seed
from ...device import get_device
from ...models import ACTIVATIONS, MoE, MoEStack, matched_dense_width, parameter_count
from ...profiles import MoESizes, Profile, SampleEfficiencySizes, get_profile
from ...train import train
from ..cache import Job, ResultCache
from ..specs import MIXED_LINK_D, MixtureSpec
from ..methods import load_network, metrics, save_network, stack_inputs, training_metrics
from ..registry import register_method
from .networks import network_spec

__all__ = ["mixture_method", "MOE_RELU", "MIXTURES", "MOE_MATCHES", "moe_sizes", "moe_expert_width", "moe_dense_widths", "train_moes",
           "load_moe", "trained_moe"]


def mixture_method(activation: str) -> str:
    """The method name of the mixture of experts of ``activation``."""
    return f"moe-{activation}"


MOE_RELU = mixture_method("relu")
#: every mixture method, by its experts' activation
MIXTURES = {act: mixture_method(act) for act in ACTIVATIONS}
#: the two accountings a dense network is matched to a mixture by (:func:`moe_dense_widths`)
MOE_MATCHES = ("params", "flops")


def moe_sizes(P: Profile) -> MoESizes:
    """The profile's mixture-of-experts grid."""
    if P.moe is None:
        raise ValueError(f"profile {P.name!r} has no moe grid (the mixtures of experts); use profile 'long'")
    return P.moe


def moe_expert_width(K: int, profile: str | Profile) -> int:
    """The expert width m of the mixture of ``K`` experts at ``profile``.

    The grid's own value when it names one (``MoESizes.expert_widths``); otherwise the rule: the
    m >= 1 whose mixture (E = K ReLU experts and the router, :func:`~monosem.models.parameter_count`
    ``kind="moe"``) has the parameter count closest to the dense ReLU network of width
    ``MoESizes.reference_width`` (default: the profile's ``sample_efficiency.width``, Figure 2's
    network); of two equally close widths the smaller. So the mixture spends about Figure 2's
    parameter budget, split over K experts and a router.
    """
    P = get_profile(profile)
    sizes = moe_sizes(P)
    fixed = sizes.expert_width(K)
    if fixed is not None:
        return int(fixed)
    ref = sizes.reference_width or P.sample_efficiency.width
    d = MIXED_LINK_D
    target = parameter_count("mlp", d, ref, "relu")
    # parameter_count("moe", ...) = E (d + 1) + E (m (d + 2) + 1): linear in m, so the rounded
    # solution or its neighbour
    per_m = parameter_count("moe", d, 2, "relu", K) - parameter_count("moe", d, 1, "relu", K)
    guess = max(1, int((target - parameter_count("moe", d, 1, "relu", K)) // per_m) + 1)
    candidates = [m for m in (guess - 1, guess, guess + 1) if m >= 1]
    return min(candidates, key=lambda m: (abs(parameter_count("moe", d, m, "relu", K) - target), m))


def moe_dense_widths(K: int, profile: str | Profile, expert_width: int | None = None,
                     activation: str = "relu") -> dict[tuple[str, str], int]:
    """``{(dense activation, match): width}``: the widths of the dense ReLU and ReGLU networks
    matched to the mixture of ``K`` experts (width ``expert_width``, default
    :func:`moe_expert_width`; ``activation`` experts) by parameter count (``"params"``) and by
    forward FLOPs per example (``"flops"``), as :func:`~monosem.models.matched_dense_width`
    rounds them (the closest count; the FLOPs of the routed computation: the router and one
    expert)."""
    m = expert_width if expert_width is not None else moe_expert_width(K, profile)
    return {(act, match): matched_dense_width(K, m, MIXED_LINK_D, activation, match, dense_activation=act)
            for act in ("relu", "reglu") for match in MOE_MATCHES}


def _params(act: str):
    def params(P: Profile, se: SampleEfficiencySizes, network: tuple[int, int] | None = None,
               n_experts: int | None = None) -> MixtureSpec:
        """A mixture's spec needs ``n_experts`` (E = K, one expert per cluster); its ``network`` is
        (expert width, batch), by default (:func:`moe_expert_width` of K = ``n_experts``, the
        grid's batch): the A.2 protocol of an MLP cell of the experts' activation (its learning
        rate too: the router trains at the experts' rate), plus the mixture's own settings."""
        if n_experts is None:
            raise ValueError(f"n_experts must be given for method={mixture_method(act)!r} (E = K, one expert per cluster)")
        width, batch = network if network is not None else (moe_expert_width(n_experts, P), se.batch)
        net = dataclasses.replace(network_spec(act, width, batch, se, P), step_revision=1)
        return MixtureSpec(network=net, n_experts=int(n_experts))
    return params


def _moe_of(job: Job, device=None) -> MoE:
    """A fresh (untrained) mixture of a ``moe-*`` job's architecture: E = ``n_experts`` experts
    of width ``width``, initialized from the run's model seed 1000 + r, as the MLP cells."""
    moe = job.spec
    return MoE(MIXED_LINK_D, moe.network.width, moe.network.activation, moe.n_experts, seed=model_seed(job.run), aux_weight=moe.aux_weight,
               router_scale=moe.router_scale, device=device)


def load_moe(job: Job, cache: ResultCache, device=None) -> MoE:
    """The trained mixture of a ``moe-*`` job from the cache (no pickle: weights_only=True).

    As :func:`~.networks.load_mlp`: the file carries its job's key; an unreadable file, one of
    another job or one whose tensors do not fit the job's architecture is moved aside
    (``*.corrupt``, with a warning) and ``FileNotFoundError`` raised, so that the caller retrains
    that one mixture (:func:`trained_moe`)."""
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
        (result,) = train_moes([job], cache)
        cache.save(job, result, time.perf_counter() - t0, device=str(get_device()), cpu_seconds=time.process_time() - c0)
        return load_moe(job, cache)


def train_moes(jobs: list[Job], cache: ResultCache | None) -> list[dict[str, Any]]:
    """Train the mixture-of-experts cells ``jobs`` (same method and settings) as one
    :class:`~monosem.models.MoEStack`, exactly as :func:`~.networks.train_mlps` trains MLP cells:
    model i from seed 1000 + r on the first n_i examples of its run's pool, the A.2 protocol of
    its key (the objective: MSE + ``aux_weight`` x the Switch Transformer's load-balancing loss;
    the reported and stopping MSE: plain), periodic checkpoints beside the cache.

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
    _, tests, data, ckpt = stack_inputs(jobs, cache)
    config = net.train_config()
    stack = MoEStack(MIXED_LINK_D, net.width, net.activation, moe_spec.n_experts, [model_seed(j.run) for j in jobs],
                     aux_weight=moe_spec.aux_weight, router_scale=moe_spec.router_scale, device=dev, dtype=jobs[0].data.torch_dtype)
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
        out.append(metrics(pred, yte) | training_metrics(result, i, config, len(jobs)) | {
            "router_ari": float(adjusted_rand_score(cte.numpy(), route.numpy())),
            "expert_load": [float(v) for v in load],
            "n_parameters": int(moe.n_parameters()),
            "forward_flops": int(moe.forward_flops()),
        })
    if ckpt is not None and ckpt.exists():
        ckpt.unlink()
    return out


def _compute(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    return train_moes([job], cache)[0]


for _act, _name in MIXTURES.items():
    register_method(_name, params=_params(_act), compute=_compute, train_many=train_moes)
