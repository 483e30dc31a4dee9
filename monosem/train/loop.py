"""Training exactly as Appendices A.1 and A.2, for one network or many at once.

The loop (:func:`train`) is Adam with zero weight decay, mini-batches drawn without replacement
(a fresh random permutation of the training set every epoch), and a cosine learning-rate decay
from ``lr`` to ``final_lr_ratio * lr`` over ``max_steps`` updates. Two protocols:

``"a1"`` (Appendix A.1, Figure 1)
    train for ``max_steps`` updates, evaluate the validation MSE every ``eval_every`` updates and
    keep the checkpoint with the smallest validation MSE. Schedules decay to 1/10.
``"a2"`` (Appendix A.2, Figures 2 and 6)
    evaluate the *training* MSE every ``eval_every`` (500) updates; after ``min_steps`` (20 000)
    updates stop when it reaches ``target_mse`` (4e-4) or after ``patience_evals`` (60)
    consecutive evaluations without a relative improvement of at least ``min_rel_improvement``
    (5e-4) over the best value so far; never run past ``max_steps`` (200 000). Restore the
    checkpoint with the lowest training MSE. Schedules decay to 1/100.

Every run is a stack of ``M`` independent networks (:class:`monosem.models.MLPStack`): one
batched forward/backward per step serves all of them, each with its own initialization seed,
data-order seed, learning rate and stopping decision (a stopped model is frozen). Adam is written
out here rather than taken from ``torch.optim`` because ``torch.optim.Adam`` has one learning rate
per parameter tensor, and a stack needs one per model; the update is the same formula, in the same
order of operations (:class:`~monosem.train.adam.StackAdam`). A step of a stack holds ``M x batch x H`` hidden activations (H = width, or
2 x width for gated nets) a few times over for the backward pass: on a GPU choose the stack
size ``M`` so that this fits (e.g. M = 64 at width 4 096, batch 4 096 needs roughly 20-40 GB in
float32).
Periodic checkpoints are written atomically and read back with
``torch.load(..., weights_only=True)``; a run interrupted at any point and started again with the
same arguments resumes from its last checkpoint and ends with bit-identical weights (the batch
order is a pure function of the seed and the step, so nothing else needs to be saved).

The same loop trains a stack of top-1 mixtures of experts (:class:`monosem.models.MoEStack`, or
one :class:`~monosem.models.MoE`): the gradient comes from autograd (the hand-derived step is
MLP-only) and the objective is the mini-batch MSE plus ``aux_weight`` times the Switch
Transformer's load-balancing loss; everything that is reported and that decides (the
evaluations, the stopping rules, the kept checkpoint) is the plain MSE.

One module for the training protocol: the config, the schedule, the batch order, the run state
and its checkpoints, and :func:`train` that composes them. The hand-derived step and Adam live in
:mod:`.step` and :mod:`.adam`.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Callable, Sequence

import torch

from ..atomic import atomic_torch_save, quarantine
from ..data import LABEL_NOISE_VARIANCE
from ..checks import check_choice, check_int, check_interval, check_positive
from ..device import torch_generator
from ..models import ACTIVATIONS, GATED, MLP, MLPStack, MoE, MoEStack
from ..progress import progress_bar
from .adam import AdamState, StackAdam
from .step import STEP_REVISION, STEP_REVISIONS, StepWorkspace, autograd_loss_and_grads, loss_and_grads

__all__ = [
    "A2_FINAL_LR_RATIO",
    "A2_MIN_REL_IMPROVEMENT",
    "LR_A1",
    "LR_A1_RELU_GRID",
    "A1_RELU_BEST_STEP",
    "LR_A2",
    "TrainConfig",
    "TrainData",
    "TrainResult",
    "a1_config",
    "a2_config",
    "cosine_lr",
    "plateau_step",
    "replay_stopping",
    "mse",
    "step_memory_bytes",
    "train",
]

#: Appendix A.1 initial learning rates (each decays to 1/10). ReLU's is the validation-selected
#: value of the grid :data:`LR_A1_RELU_GRID`.
LR_A1 = {"relu": 0.004, "gelu": 0.016, "reglu": 0.0016, "swiglu": 0.0256}
LR_A1_RELU_GRID = (0.004, 0.008, 0.012, 0.016, 0.024, 0.032)
#: Appendix A.1: the update of the validation-selected checkpoint of the selected ReLU schedule.
A1_RELU_BEST_STEP = 37_000
#: Appendix A.2 initial learning rates (each decays to 1/100: :data:`A2_FINAL_LR_RATIO`).
LR_A2 = {"relu": 1e-2, "gelu": 3e-2, "reglu": 3e-3, "swiglu": 1e-2}
#: Appendix A.2: the schedules end at 1/100 of the initial rate (10^-2 -> 10^-4, ...).
A2_FINAL_LR_RATIO = 0.01
#: Appendix A.2: the plateau rule's relative training-MSE improvement.
A2_MIN_REL_IMPROVEMENT = 5e-4

#: how a step's gradient is computed (see ``train(gradients=...)``)
_GRADIENTS = {"manual": loss_and_grads, "autograd": autograd_loss_and_grads}
_EVAL_CHUNK = 8192
_EVAL_BLOCK_CPU = 2**20


#: live ``(batch, H)`` tensors of one step, counted generously: the pre-activations, the
#: activation and its derivative, the hidden representation, its gradient, and temporaries
_LIVE_ACTIVATIONS = 8


def step_memory_bytes(width: int, batch: int, activation: str, d: int, dtype: torch.dtype = torch.float32) -> int:
    """An upper estimate of the memory one network of a stack holds while it trains: the
    ``(batch, H)`` activations of a step (H = width, or 2 x width for a gated net) a few times
    over, plus its parameters six times (the values, the best checkpoint, the gradient, Adam's two
    moments, a temporary). The evaluation chunks of :func:`mse` are bounded for the whole stack,
    not per network, and are not counted. Used to size stacks by a device's free memory."""
    check_choice(activation, "activation", ACTIVATIONS)
    H = 2 * width if activation in GATED else width
    numbers = _LIVE_ACTIVATIONS * batch * H + 6 * (H * d + H + width + 1)
    return int(numbers * torch.empty(0, dtype=dtype).element_size())


@dataclass(frozen=True)
class TrainConfig:
    """Everything that decides a training run except the data and the seeds.

    ``protocol`` is ``"a1"`` (validation-selected checkpoint, fixed length) or ``"a2"``
    (training-MSE stopping and selection); see the module docstring. ``step_revision``: the
    revision of the hand-derived step (:data:`~monosem.train.step.STEP_REVISIONS`; the same
    gradient to rounding, other last bits, so a recorded run names the one it used). Read by the
    ``gradients="manual"`` path only.
    """

    max_steps: int
    batch: int
    lr: float
    final_lr_ratio: float = 0.1
    protocol: str = "a1"
    eval_every: int = 500
    min_steps: int = 0
    target_mse: float = 0.0
    patience_evals: int = 60
    min_rel_improvement: float = 5e-4
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    step_revision: int = STEP_REVISION
    #: the cosine's horizon: the rate reaches ``final_lr_ratio * lr`` at this update (``None``:
    #: at ``max_steps``, Appendix A.1). Longer than ``max_steps``, the run stops before the decay ends.
    schedule_steps: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_steps", "batch", "eval_every", "patience_evals"):
            v = getattr(self, name)
            check_int(v, name)
        check_int(self.min_steps, "min_steps", 0, self.max_steps, what="at most max_steps")
        _check_lr(self.lr)
        check_interval(self.final_lr_ratio, "final_lr_ratio", 0, 1, closed="right")
        check_choice(self.protocol, "protocol", ("a1", "a2"))
        check_choice(self.step_revision, "step_revision", STEP_REVISIONS)
        if self.schedule_steps is not None:
            check_int(self.schedule_steps, "schedule_steps")
        if not self.target_mse >= 0 or not self.min_rel_improvement >= 0:
            raise ValueError("target_mse and min_rel_improvement must be >= 0")
        if not (0 <= self.betas[0] < 1 and 0 <= self.betas[1] < 1) or not self.eps > 0:
            raise ValueError(f"betas={self.betas!r} must lie in [0, 1) and eps={self.eps!r} must be > 0")

    def with_lr(self, lr: float) -> "TrainConfig":
        return TrainConfig(**{**asdict(self), "lr": lr})


def _check_lr(lr: float) -> float:
    return check_positive(lr, "lr")


def a1_config(activation: str, *, max_steps: int | None = None, batch: int = 2048, lr: float | None = None, eval_every: int = 500,
              step_revision: int = STEP_REVISION) -> TrainConfig:
    """Appendix A.1: Adam, batch 2 048, cosine decay to 1/10, validation-selected checkpoint;
    at most 40 000 steps for ReLU and 20 000 for the others unless ``max_steps`` is given."""
    if activation not in ACTIVATIONS:
        check_choice(activation, "activation", ACTIVATIONS)
    steps = max_steps if max_steps is not None else (40_000 if activation == "relu" else 20_000)
    return TrainConfig(max_steps=steps, batch=batch, lr=LR_A1[activation] if lr is None else lr, final_lr_ratio=0.1, protocol="a1", eval_every=eval_every,
                       step_revision=step_revision)


def a2_config(
    activation: str,
    *,
    min_steps: int = 20_000,
    max_steps: int = 200_000,
    batch: int = 4096,
    eval_every: int = 500,
    patience_evals: int = 60,
    # Appendix A.2: stop at a training MSE of 4e-4, "which equals the label-noise variance"
    target_mse: float = LABEL_NOISE_VARIANCE,
    lr: float | None = None,
    final_lr_ratio: float = A2_FINAL_LR_RATIO,
    min_rel_improvement: float = A2_MIN_REL_IMPROVEMENT,
    step_revision: int = STEP_REVISION,
) -> TrainConfig:
    """Appendix A.2: Adam, batch 4 096, cosine decay to 1/100, 20 000-200 000 updates, stop at
    training MSE 4e-4 or after 60 evaluations (every 500 updates) without 5e-4 relative
    improvement, restore the lowest-training-MSE checkpoint."""
    if activation not in ACTIVATIONS:
        check_choice(activation, "activation", ACTIVATIONS)
    return TrainConfig(
        max_steps=max_steps, batch=batch, lr=LR_A2[activation] if lr is None else lr, final_lr_ratio=final_lr_ratio,
        protocol="a2", eval_every=eval_every, min_steps=min_steps, target_mse=target_mse,
        patience_evals=patience_evals, min_rel_improvement=min_rel_improvement, step_revision=step_revision,
    )


def cosine_lr(step: int, max_steps: int, lr: float | torch.Tensor, final_lr_ratio: float = 0.1):
    """Learning rate of update ``step`` (0-based): cosine decay from ``lr`` at step 0 to
    ``final_lr_ratio * lr`` at step ``max_steps`` (Appendix A.1: "decaying to one tenth")."""
    lo = lr * final_lr_ratio
    return lo + (lr - lo) * 0.5 * (1.0 + math.cos(math.pi * min(step, max_steps) / max_steps))


def plateau_step(best: torch.Tensor, since: torch.Tensor, value: torch.Tensor, min_rel_improvement: float) -> tuple[torch.Tensor, torch.Tensor]:
    """One evaluation of the Appendix A.2 plateau rule, for a vector of models.

    A value at least ``min_rel_improvement`` (relative) below the best so far resets the count of
    evaluations without improvement; anything else increments it. Returns the new ``(best,
    since)``; ``best`` tracks the plain minimum (the checkpoint to restore).
    """
    improved = value <= best * (1.0 - min_rel_improvement)
    since = torch.where(improved, torch.zeros_like(since), since + 1)
    return torch.minimum(best, value), since


def replay_stopping(values: Sequence[float], config: TrainConfig) -> tuple[int, int]:
    """Apply ``config``'s stopping and selection rules to a given loss curve, one value per
    evaluation (at steps ``eval_every, 2*eval_every, ...``).

    Returns ``(stop_step, best_step)``: the step at which training ends and the step of the
    checkpoint that is kept. The same code path as :func:`train`, for testing the rules on
    synthetic curves.
    """
    best = torch.tensor([math.inf], dtype=torch.float64)
    since = torch.zeros(1, dtype=torch.long)
    best_step = 0
    for i, v in enumerate(values):
        step = (i + 1) * config.eval_every
        if step > config.max_steps:
            return config.max_steps, best_step
        value = torch.tensor([float(v)], dtype=torch.float64)
        if bool(value < best):
            best_step = step
        best, since = plateau_step(best, since, value, config.min_rel_improvement)
        if config.protocol == "a2" and bool(_a2_stop(step, value, since, config)):
            return step, best_step
    return min(len(values) * config.eval_every, config.max_steps), best_step


def _a2_stop(step: int, value: torch.Tensor, since: torch.Tensor, config: TrainConfig) -> torch.Tensor:
    if step < config.min_steps:
        return torch.zeros_like(since, dtype=torch.bool)
    return (value <= config.target_mse) | (since >= config.patience_evals)


@dataclass
class TrainData:
    """Training (and validation) data for a stack of ``M`` models.

    ``x_train`` is ``(n, d)`` (shared by all models) or ``(M, n, d)`` (one set per model);
    ``y_train`` is ``(n,)`` or ``(M, n)``; likewise for the optional validation set.
    ``n_used`` optionally gives each model a prefix ``x_train[..., :n_used[i], :]`` of the
    training set (the nested pools of Appendix A.2).
    """

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_val: torch.Tensor | None = None
    y_val: torch.Tensor | None = None
    n_used: tuple[int, ...] | None = None

    def check(self, M: int, d: int) -> None:
        for name, x, y in (("train", self.x_train, self.y_train), ("val", self.x_val, self.y_val)):
            if x is None:
                if y is not None:
                    raise ValueError(f"y_{name} given without x_{name}")
                continue
            if x.ndim not in (2, 3) or x.shape[-1] != d or (x.ndim == 3 and x.shape[0] != M):
                raise ValueError(f"x_{name} must be (n, {d}) or ({M}, n, {d}), got {tuple(x.shape)}")
            if y is None or y.shape != x.shape[:-1]:
                raise ValueError(f"y_{name} must have shape {tuple(x.shape[:-1])}")
            for label, t in ((f"x_{name}", x), (f"y_{name}", y)):
                if not bool(torch.isfinite(t).all()):
                    raise ValueError(f"{label} holds NaN or infinite values; training on them would be reported as divergence")
        n = self.x_train.shape[-2]
        if self.n_used is not None and (len(self.n_used) != M or not all(1 <= k <= n for k in self.n_used)):
            raise ValueError(f"n_used must give {M} sizes in [1, {n}]")

    def sizes(self, M: int) -> list[int]:
        n = self.x_train.shape[-2]
        return list(self.n_used) if self.n_used is not None else [n] * M


@dataclass
class TrainResult:
    """What :func:`train` returns. ``stack`` holds the *selected* checkpoint of every model."""

    stack: MLPStack | MoEStack
    config: TrainConfig
    lrs: tuple[float, ...]
    best_step: torch.Tensor
    best_value: torch.Tensor
    stop_step: torch.Tensor
    history: dict[str, torch.Tensor]
    steps_run: int
    seconds: float
    resumed_from: int = 0
    extra: dict = field(default_factory=dict)
    #: wall and CPU seconds of the sittings before this call (a resumed run):
    #: ``seconds + earlier_seconds`` is the whole run's wall time
    earlier_seconds: float = 0.0
    earlier_cpu_seconds: float = 0.0

    def models(self) -> list[MLP] | list[MoE]:
        return self.stack.unstack()

    @property
    def steps_per_second(self) -> float:
        """Optimizer steps (of the whole stack) per second of this call."""
        done = self.steps_run - self.resumed_from
        return done / self.seconds if self.seconds > 0 else float("nan")


@dataclass
class RunState:
    """Where a run stands, per model: the kept checkpoint and its value, the plateau counter,
    which models still train and when each stopped, and the evaluation history. Together with the
    optimizer's state and the parameters it is what a checkpoint holds."""

    step: int
    best_params: list[torch.Tensor]
    best_value: torch.Tensor
    best_step: torch.Tensor
    plateau_best: torch.Tensor
    since: torch.Tensor
    active: torch.Tensor
    stop_step: torch.Tensor
    hist_step: list[int] = field(default_factory=list)
    hist_train: list[torch.Tensor] = field(default_factory=list)
    hist_val: list[torch.Tensor] = field(default_factory=list)
    finished: bool = False
    #: wall and process-CPU seconds of the run's earlier sittings (checkpoints written before these
    #: existed resume with 0)
    elapsed: float = 0.0
    cpu_elapsed: float = 0.0

    @classmethod
    def start(cls, params: Sequence[torch.Tensor], max_steps: int) -> "RunState":
        M, dev = params[0].shape[0], params[0].device
        inf = torch.full((M,), math.inf, dtype=torch.float64, device=dev)
        return cls(
            step=0, best_params=[p.detach().clone() for p in params], best_value=inf.clone(),
            best_step=torch.zeros(M, dtype=torch.long, device=dev), plateau_best=inf.clone(),
            since=torch.zeros(M, dtype=torch.long, device=dev), active=torch.ones(M, dtype=torch.bool, device=dev),
            stop_step=torch.full((M,), max_steps, dtype=torch.long, device=dev),
        )

    @staticmethod
    def keys() -> tuple[str, ...]:
        return tuple(f.name for f in fields(RunState))

    @staticmethod
    def required_keys() -> tuple[str, ...]:
        """What a checkpoint must hold (the time of earlier sittings came later: optional)."""
        return tuple(k for k in RunState.keys() if k not in ("elapsed", "cpu_elapsed"))

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.keys()}


@torch.no_grad()
def mse(model: MLP | MLPStack | MoE | MoEStack, x: torch.Tensor, y: torch.Tensor, n_used: Sequence[int] | None = None) -> torch.Tensor:
    """Mean squared error of every model of a stack, ``(M,)`` in float64 (a scalar for an MLP or
    an MoE); for a mixture of experts the plain MSE, without the load-balancing term.

    ``x`` is ``(n, d)`` or ``(M, n, d)``; with ``n_used`` model ``i`` is scored on its first
    ``n_used[i]`` rows only. Evaluated in chunks so that large sets fit in memory.
    """
    if isinstance(model, (MLP, MoE)):
        return ((model(x) - y).double() ** 2).mean()
    M = model.n_models
    n = x.shape[-2]
    sizes = torch.tensor(list(n_used) if n_used is not None else [n] * M, device=x.device)
    total = torch.zeros(M, dtype=torch.float64, device=x.device)
    # keep the (M, chunk, H) hidden activations near 2**27 numbers, whatever the stack size (a
    # mixture evaluates the first layer of all its experts: E*H per example)
    hidden = model.W.shape[1] if isinstance(model, MLPStack) else model.n_experts * model.W.shape[2]
    chunk = max(256, min(_EVAL_CHUNK, 2**27 // (M * hidden)))
    # on a CPU the forward runs on sub-blocks of about _EVAL_BLOCK_CPU hidden numbers (4 MiB):
    # a chunk's (M, chunk, H) activations, hundreds of MiB made afresh per chunk, cost more in new
    # pages and cache misses than in arithmetic (benchmarks/train.py measures the two). Each row's
    # prediction does not depend on its neighbours, so the sums, and the numbers, are unchanged:
    # the blocks are powers of two of at least 64 rows, so that the matrix-vector kernels see the
    # rows at the same alignment as in one chunk (blocks of 341 rows do change the last bits).
    # That holds on one thread; on more, MKL splits a product among them by its size and the last
    # bits may move (7e-12 relative in the MSE, two threads of an AVX-512 machine)
    block = chunk if x.device.type != "cpu" else 1 << max(6, (_EVAL_BLOCK_CPU // (M * hidden)).bit_length() - 1)
    for s in range(0, n, chunk):
        xe, ye = x[..., s : s + chunk, :], y[..., s : s + chunk]
        rows_e = xe.shape[-2]
        pred = model(xe) if block >= rows_e else torch.cat([model(xe[..., i : i + block, :]) for i in range(0, rows_e, block)], dim=-1)
        err = (pred - ye).double() ** 2
        rows = torch.arange(s, s + err.shape[1], device=x.device)
        total += (err * (rows.unsqueeze(0) < sizes.unsqueeze(1))).sum(1)
    return total / sizes.double()


class _BatchOrder:
    """Mini-batch indices as a pure function of (seed, step): the training positions
    ``[step*B, (step+1)*B)`` of an endless sequence of per-epoch random permutations.

    Model ``i``'s permutation of epoch ``e`` is ``randperm(n_i)`` drawn from
    ``torch_generator(1_000_003 * seed_i + e)``. Models with the same training-set size are
    sliced together, so a step costs a few tensor operations however many models are stacked.
    """

    def __init__(self, seeds: Sequence[int], sizes: Sequence[int], batch: int, device: torch.device) -> None:
        for n in sizes:
            if batch > n:
                raise ValueError(f"batch={batch} exceeds the training-set size {n}")
        self.seeds, self.sizes, self.batch, self.device = list(seeds), list(sizes), batch, device
        self.groups: dict[int, torch.Tensor] = {}
        # the same members as host integers: an epoch's permutations read them without a copy
        # back from the device
        self.members: dict[int, list[int]] = {}
        for n in dict.fromkeys(sizes):
            self.members[n] = [i for i, k in enumerate(sizes) if k == n]
            self.groups[n] = torch.tensor(self.members[n], device=device)
        self._cache: dict[tuple[int, int], torch.Tensor] = {}

    def _perms(self, n: int, epoch: int) -> torch.Tensor:
        """``(M_n, n)`` permutations of epoch ``epoch`` for the models of size ``n``."""
        key = (n, epoch)
        if key not in self._cache:
            self._cache = {k: v for k, v in self._cache.items() if k[1] >= epoch - 1}
            rows = [torch.randperm(n, generator=torch_generator(1_000_003 * self.seeds[i] + epoch)) for i in self.members[n]]
            self._cache[key] = torch.stack(rows).to(self.device)
        return self._cache[key]

    def indices(self, step: int) -> torch.Tensor:
        """``(M, B)`` row indices of the mini-batch of update ``step`` (0-based)."""
        out = torch.empty(len(self.sizes), self.batch, dtype=torch.long, device=self.device)
        start = step * self.batch
        for n, members in self.groups.items():
            e0, o0 = divmod(start, n)
            if o0 + self.batch <= n:
                rows = self._perms(n, e0)[:, o0 : o0 + self.batch]
            else:
                head = self._perms(n, e0)[:, o0:]
                rows = torch.cat([head, self._perms(n, e0 + 1)[:, : self.batch - head.shape[1]]], dim=1)
            out[members] = rows
        return out


def _take(x: torch.Tensor, idx: torch.Tensor, per_model: bool) -> torch.Tensor:
    """Rows ``idx`` (M, B) of ``x``: shared ``(n, ...)`` or per-model ``(M, n, ...)``."""
    if per_model:
        return x[torch.arange(idx.shape[0], device=idx.device).unsqueeze(1), idx]
    # index_select copies the same rows as x[idx] with less indexing overhead on a CPU
    return x.index_select(0, idx.reshape(-1)).view(*idx.shape, *x.shape[1:])


def _config_entry(config: TrainConfig, reads_step: bool) -> dict:
    """The config as a checkpoint's fingerprint holds it. The step revision is left out where it is
    1 (checkpoints written before revisions existed were computed with it, and still resume) and
    where the run does not read it (a mixture of experts trains through autograd)."""
    out = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(config).items()}
    if not reads_step or out["step_revision"] == 1:
        del out["step_revision"]
    if out["schedule_steps"] is None:  # the default horizon leaves earlier checkpoints resumable
        del out["schedule_steps"]
    return out


def _fingerprint(config: TrainConfig, lrs: Sequence[float], seeds: Sequence[int], order_seeds: Sequence[int], stack: MLPStack | MoEStack,
                 sizes: Sequence[int]) -> dict:
    if isinstance(stack, MoEStack):
        # a separate "arch" entry, so that no mixture's checkpoint can match an MLP run's (the MLP
        # entry below is left exactly as it was, so that existing checkpoints still resume)
        arch = ["moe", stack.d, stack.width, stack.activation, stack.n_experts, float(stack.aux_weight), float(stack.router_scale), float(stack.hidden_scale)]
        return {
            "config": _config_entry(config, reads_step=False),
            "lrs": [float(v) for v in lrs],
            "seeds": [int(s) for s in seeds],
            "order_seeds": [int(s) for s in order_seeds],
            "arch": arch,
            "sizes": [int(n) for n in sizes],
        }
    return {
        "config": _config_entry(config, reads_step=True),
        "lrs": [float(v) for v in lrs],
        "seeds": [int(s) for s in seeds],
        "order_seeds": [int(s) for s in order_seeds],
        # the initialization joins the fingerprint only when it is not the default, so that
        # checkpoints written before it existed still resume
        "arch": [stack.d, stack.width, stack.activation, float(stack.output_scale), float(stack.hidden_scale)]
        + ([stack.init] if stack.init != "pytorch" else [])
        + ([float(stack.readout_lr_scale)] if stack.readout_lr_scale != 1.0 else []),
        "sizes": [int(n) for n in sizes],
    }


def _moe_loss_and_grads(stack: MoEStack, xb: torch.Tensor, yb: torch.Tensor):
    """Per-model mini-batch MSEs ``(M,)`` and, through autograd, the gradients of the sum over
    models of the training objective ``MSE + aux_weight * aux`` (Switch Transformer) with
    respect to ``stack.param_names``. Each model's parameters enter only its own term, so the
    sum's gradient is every model's own."""
    params = [getattr(stack, name) for name in stack.param_names]
    out, aux = stack.forward_and_aux(xb)
    loss = ((out - yb) ** 2).mean(dim=1)
    objective = loss + stack.aux_weight * aux if stack.aux_weight != 0 else loss
    grads = torch.autograd.grad(objective.sum(), params)
    return (loss.detach(), *grads)


def train(
    model: MLP | MLPStack | MoE | MoEStack,
    data: TrainData,
    config: TrainConfig,
    *,
    lrs: Sequence[float] | None = None,
    order_seeds: Sequence[int] | None = None,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int | None = None,
    progress: bool = True,
    desc: str | None = None,
    callback: Callable[[int], None] | None = None,
    gradients: str | None = None,
) -> TrainResult:
    """Train ``model`` (an :class:`MLP` or a stack of ``M`` of them; or a mixture of experts,
    :class:`MoE` / :class:`MoEStack`) as in Appendix A.1 or A.2.

    Parameters
    ----------
    model:
        Trained in place; at the end every model holds its selected checkpoint.
    data:
        Training and (for protocol ``"a1"``) validation data.
    config:
        Steps, batch, schedule and protocol (:func:`a1_config`, :func:`a2_config`).
    lrs:
        One initial learning rate per model (default ``config.lr`` for all): a learning-rate
        sweep is one stack.
    order_seeds:
        Seed of each model's mini-batch order (default: the model's initialization seed).
    checkpoint, checkpoint_every:
        File for periodic checkpoints (default every ``eval_every`` steps). If the file exists
        and was written by a run with the same arguments, training resumes from it; a finished
        run is returned without further training.
    progress:
        Show a tqdm bar (``TQDM_DISABLE=1`` silences it).
    callback:
        Called with the step count after every update (used by the tests to interrupt a run).
    gradients:
        ``"manual"`` (the default for MLPs): the hand-derived loss gradient of
        :mod:`monosem.train.step`; ``"autograd"``: the same gradient through ``torch.autograd``
        (the reference; slower). Both give the same updates to rounding. A mixture of experts
        always trains through autograd (its default; ``"manual"`` is refused with a
        ValueError, since the hand-derived step covers MLPs only), on the objective MSE +
        ``aux_weight`` * load-balancing loss.
    """
    stack, single = _as_stack(model)
    gradient = _gradient_function(stack, gradients, config)
    lrs, order_seeds = _check_run(stack, data, config, lrs, order_seeds)
    sizes = data.sizes(stack.n_models)
    order = _BatchOrder(order_seeds, sizes, config.batch, stack.W.device)
    params, opt = [getattr(stack, name) for name in stack.param_names], StackAdam(config.betas, config.eps)
    ckpt = _Checkpoint(checkpoint, _fingerprint(config, lrs, stack.seeds, order_seeds, stack, sizes), stack.W.device)
    run, opt_state = ckpt.resume(params, RunState.start(params, config.max_steps), opt.init(params))
    resumed_from = run.step
    bar = _progress_bar(stack, config, resumed_from, progress, desc)
    _update_until_done(stack, params, gradient, data, config, order, opt, opt_state, run, ckpt, bar, lrs=lrs, sizes=sizes,
                       every=checkpoint_every or config.eval_every, callback=callback)
    bar.close()
    return _result(model if single else None, stack, params, run, config, lrs, resumed_from, ckpt)


def _update_until_done(stack, params, gradient, data: TrainData, config: TrainConfig, order: _BatchOrder, opt: StackAdam,
                       opt_state, run: RunState, ckpt: _Checkpoint, bar, *, lrs, sizes, every: int,
                       callback: Callable[[int], None] | None) -> None:
    """:func:`train`'s loop: update every model of ``stack`` (its mini-batch, the gradient, Adam
    at the cosine rate; a frozen model gets rate 0) until ``run`` is finished, evaluating every
    ``eval_every`` steps and checkpointing every ``every``."""
    dev, dtype = stack.W.device, stack.W.dtype
    per_model_x = data.x_train.ndim == 3
    x_tr, y_tr = data.x_train.to(dev, dtype), data.y_train.to(dev, dtype)
    x_va = data.x_val.to(dev, dtype) if data.x_val is not None else None
    y_va = data.y_val.to(dev, dtype) if data.y_val is not None else None
    lr0, scales = torch.tensor(lrs, dtype=dtype, device=dev), _rate_factors(stack)
    while not run.finished:
        idx = order.indices(run.step)
        grads = gradient(stack, _take(x_tr, idx, per_model_x), _take(y_tr, idx, per_model_x))[1:]
        lr_t = cosine_lr(run.step, config.schedule_steps or config.max_steps, lr0, config.final_lr_ratio) * run.active
        opt_state = opt.update(params, grads, opt_state, lr_t, scales)
        run.step = step = opt_state.count
        bar.update(1)
        if step % config.eval_every == 0 or step == config.max_steps:
            _evaluate(stack, params, run, config, step, x_tr, y_tr, x_va, y_va, sizes)
            finite = run.best_value[run.best_value.isfinite()]
            bar.set_postfix(best=f"{float(finite.min()) if finite.numel() else float('nan'):.3g}")
            run.finished = not bool(run.active.any())
        run.finished = run.finished or step >= config.max_steps
        if run.finished or step % every == 0:
            ckpt.save(params, run, opt_state)
        if callback is not None:
            callback(step)


def _as_stack(model) -> tuple[MLPStack | MoEStack, bool]:
    """The stack a run trains (a single network becomes a stack of one) and whether it was single."""
    if isinstance(model, MLP):
        return MLPStack.from_models([model]), True
    if isinstance(model, MoE):
        return MoEStack.from_models([model]), True
    if not isinstance(model, (MLPStack, MoEStack)):
        raise ValueError(f"model must be an MLP, an MLPStack, an MoE or an MoEStack, got {type(model).__name__}")
    return model, False


def _gradient_function(stack, gradients: str | None, config: TrainConfig) -> Callable:
    """``(stack, xb, yb) -> (loss, *grads)``: the hand-derived step (the MLPs' default), autograd,
    or, for a mixture of experts, autograd on its objective."""
    if gradients is not None and gradients not in _GRADIENTS:
        check_choice(gradients, "gradients", sorted(_GRADIENTS))
    if isinstance(stack, MoEStack):
        if gradients == "manual":
            raise ValueError("gradients='manual' is the hand-derived MLP step; a mixture of experts trains with gradients='autograd' (its default)")
        return _moe_loss_and_grads
    if (gradients or "manual") != "manual":
        return _GRADIENTS[gradients]
    # one workspace for the whole run: the step's (batch, H) buffers are allocated once
    workspace = StepWorkspace()

    def gradient(stack, xb, yb):
        return loss_and_grads(stack, xb, yb, workspace=workspace, revision=config.step_revision)

    return gradient


def _check_run(stack, data: TrainData, config: TrainConfig, lrs, order_seeds) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """The run's checked learning rates and batch-order seeds (defaults: ``config.lr`` and the
    models' initialization seeds)."""
    if not isinstance(config, TrainConfig):
        raise ValueError("config must be a TrainConfig (see a1_config / a2_config)")
    M = stack.n_models
    data.check(M, stack.d)
    if config.protocol == "a1" and data.x_val is None:
        raise ValueError("protocol 'a1' selects the checkpoint by validation MSE: give x_val and y_val")
    lrs = tuple(_check_lr(v) for v in (lrs if lrs is not None else [config.lr] * M))
    if len(lrs) != M:
        raise ValueError(f"lrs must give {M} learning rates, got {len(lrs)}")
    order_seeds = tuple(order_seeds) if order_seeds is not None else stack.seeds
    if len(order_seeds) != M:
        raise ValueError(f"order_seeds must give {M} seeds")
    return lrs, order_seeds


def _rate_factors(stack) -> list[float] | None:
    """Per-tensor rate factors (W, b, a, a0): the readout's relative rate when it is not 1, else
    none (a mixture has one rate for all its tensors)."""
    readout_lr_scale = getattr(stack, "readout_lr_scale", 1.0)
    return None if readout_lr_scale == 1.0 else [1.0, 1.0, float(readout_lr_scale), 1.0]


def _progress_bar(stack, config: TrainConfig, resumed_from: int, progress: bool, desc: str | None):
    name = desc or (f"moe{stack.n_experts} " if isinstance(stack, MoEStack) else "") + f"{stack.activation} x{stack.n_models}"
    return progress_bar(progress=progress, total=config.max_steps, initial=resumed_from, desc=name, leave=False)


class _Checkpoint:
    """A run's checkpoint file (or none): resume from it, save to it atomically, and keep the wall
    and CPU time of the run's earlier sittings."""

    def __init__(self, checkpoint: str | os.PathLike | None, fingerprint: dict, dev: torch.device) -> None:
        self.path = Path(checkpoint) if checkpoint is not None else None
        self.fingerprint, self.dev = fingerprint, dev
        self.earlier = self.earlier_cpu = 0.0
        self.t0, self.c0 = time.perf_counter(), time.process_time()

    def resume(self, params: list[torch.Tensor], run: RunState, opt_state: AdamState) -> tuple[RunState, AdamState]:
        """The run's state: ``run`` and ``opt_state`` as given, or the saved ones (parameters copied in)."""
        saved = _load_checkpoint(self.path, self.dev)
        if saved is not None:
            if saved["fingerprint"] != self.fingerprint:
                raise ValueError(f"checkpoint {self.path} was written by a run with different arguments; delete it or pass another path")
            with torch.no_grad():
                for p, v in zip(params, saved["params"]):
                    p.copy_(v)
            run = RunState(**{k: saved[k] for k in RunState.keys() if k in saved})
            opt_state = AdamState(run.step, saved["adam_m"], saved["adam_v"])
        self.earlier, self.earlier_cpu = float(run.elapsed), float(run.cpu_elapsed)
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        return run, opt_state

    def save(self, params: list[torch.Tensor], run: RunState, opt_state: AdamState) -> None:
        if self.path is not None:
            run.elapsed = self.earlier + time.perf_counter() - self.t0
            run.cpu_elapsed = self.earlier_cpu + time.process_time() - self.c0
            atomic_torch_save({"fingerprint": self.fingerprint, "params": [p.detach() for p in params], **run.as_dict(),
                               "adam_m": opt_state.m, "adam_v": opt_state.v}, self.path)


def _result(single_model, stack, params, run: RunState, config: TrainConfig, lrs, resumed_from: int, ckpt: _Checkpoint) -> TrainResult:
    """Put every model's kept checkpoint back into the stack (and the single model, if any) and
    gather the run's history."""
    seconds = time.perf_counter() - ckpt.t0
    with torch.no_grad():
        for p, best in zip(params, run.best_params):
            p.copy_(best)
        if single_model is not None:
            for name in stack.param_names:
                getattr(single_model, name).copy_(getattr(stack, name)[0])
    M = stack.n_models
    hist = {
        "step": torch.tensor(run.hist_step, dtype=torch.long),
        "train_mse": torch.stack(run.hist_train).cpu() if run.hist_train else torch.zeros(0, M, dtype=torch.float64),
        "val_mse": torch.stack(run.hist_val).cpu() if run.hist_val else torch.zeros(0, M, dtype=torch.float64),
    }
    return TrainResult(
        stack=stack, config=config, lrs=lrs, best_step=run.best_step.cpu(), best_value=run.best_value.cpu(),
        stop_step=run.stop_step.cpu(), history=hist, steps_run=run.step, seconds=seconds, resumed_from=resumed_from,
        earlier_seconds=ckpt.earlier, earlier_cpu_seconds=ckpt.earlier_cpu,
    )


def _load_checkpoint(path: Path | None, dev: torch.device) -> dict | None:
    """A checkpoint's contents, or None when there is none; a damaged one is moved aside (with a
    warning) and the run starts afresh: one run's work, not a blocked sweep."""
    if path is None or not path.exists():
        return None
    try:
        saved = torch.load(path, map_location=dev, weights_only=True)
        needed = ("fingerprint", "params", "adam_m", "adam_v", *RunState.required_keys())
        if not isinstance(saved, dict) or any(k not in saved for k in needed):
            raise ValueError("not a training checkpoint")
    except Exception as err:  # noqa: BLE001 - whatever torch.load raises on a damaged file
        quarantine(path, str(err) or type(err).__name__)
        return None
    return saved


def _evaluate(stack, params, run: RunState, config, step, x_tr, y_tr, x_va, y_va, sizes) -> None:
    """One evaluation: log the metrics, update the kept checkpoint and (A.2) the stopping rule."""
    M = stack.n_models
    nan = torch.full((M,), math.nan, dtype=torch.float64, device=stack.W.device)
    val = mse(stack, x_va, y_va) if x_va is not None else nan
    need_train = config.protocol == "a2" or x_va is None
    tr = mse(stack, x_tr, y_tr, sizes) if need_train else nan
    run.hist_step.append(step)
    run.hist_train.append(tr)
    run.hist_val.append(val)
    metric = val if config.protocol == "a1" else tr
    active = run.active
    # a model whose loss is no longer finite has diverged: freeze it (checked here, not every
    # step, to keep the GPU free of per-step synchronizations)
    diverged = active & ~torch.isfinite(metric)
    run.stop_step = torch.where(diverged, torch.full_like(run.stop_step, step), run.stop_step)
    run.active = active = active & ~diverged
    metric = torch.where(torch.isfinite(metric), metric, torch.full_like(metric, math.inf))
    improved = active & (metric < run.best_value)
    run.best_value = torch.where(improved, metric, run.best_value)
    run.best_step = torch.where(improved, torch.full_like(run.best_step, step), run.best_step)
    for p, best in zip(params, run.best_params):
        mask = improved.view(-1, *[1] * (p.ndim - 1))
        best.copy_(torch.where(mask, p.detach(), best))
    if config.protocol == "a2":
        pb, since = plateau_step(run.plateau_best, run.since, metric, config.min_rel_improvement)
        run.plateau_best = torch.where(active, pb, run.plateau_best)
        run.since = torch.where(active, since, run.since)
        stop = active & _a2_stop(step, metric, run.since, config)
        run.stop_step = torch.where(stop, torch.full_like(run.stop_step, step), run.stop_step)
        run.active = active & ~stop
