"""The Section 3.1 / Appendix A.1 runs: the four networks on ``figure1_model()``.

Every activation is one batched run (:func:`monosem.train.train`): the ReLU stack holds every
(learning rate, seed) pair of the learning-rate search, the others one model per seed. The
ReLU learning rate is chosen per seed by validation MSE only, as in Appendix A.1.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import torch

from ..data import figure1_model
from ..device import get_device
from ..models import MLP, MLPStack, init_parameters
from ..profiles import SpecializationSizes
from ..train import LR_A1, TrainData, a1_config, mse, train

__all__ = ["FIGURE1_SAMPLE_SEEDS", "Figure1Run", "figure1_data", "train_figure1", "relative_movement", "paper_profile_estimate"]

#: Our seeds for ``figure1_model().sample`` (the paper does not give its own).
FIGURE1_SAMPLE_SEEDS = {"train": 1, "val": 2, "test": 3}


@dataclass
class Figure1Run:
    """One activation's trained networks, one per seed (validation-selected)."""

    activation: str
    seeds: tuple[int, ...]
    models: list[MLP]
    lrs: tuple[float, ...]
    best_step: tuple[int, ...]
    val_mse: tuple[float, ...]
    test_mse: tuple[float, ...]
    steps: int
    steps_per_second: float
    seconds: float
    n_stacked: int
    output_scale: float = 1.0
    hidden_scale: float = 1.0
    grid_val_mse: dict[float, tuple[float, ...]] = field(default_factory=dict)


def figure1_data(sizes: SpecializationSizes, *, device: str | torch.device | None = None):
    """``(TrainData, (x_test, y_test))`` from ``figure1_model()`` at the sizes of a profile,
    drawn with :data:`FIGURE1_SAMPLE_SEEDS`."""
    m = figure1_model()
    dev = get_device(device)
    x, y, _ = m.sample(sizes.n_train, FIGURE1_SAMPLE_SEEDS["train"], device=dev)
    xv, yv, _ = m.sample(sizes.n_val, FIGURE1_SAMPLE_SEEDS["val"], device=dev)
    xt, yt, _ = m.sample(sizes.n_test, FIGURE1_SAMPLE_SEEDS["test"], device=dev)
    return TrainData(x, y, xv, yv), (xt, yt)


def train_figure1(
    sizes: SpecializationSizes,
    activation: str,
    *,
    output_scale: float = 1.0,
    hidden_scale: float = 1.0,
    init: str = "pytorch",
    readout_lr_scale: float = 1.0,
    seeds: Sequence[int] | None = None,
    data=None,
    device: str | torch.device | None = None,
    checkpoint_dir: str | os.PathLike | None = None,
    progress: bool = True,
) -> Figure1Run:
    """Train ``activation``'s networks of Figure 1 (Appendix A.1) at ``sizes``.

    ReLU searches ``sizes.relu_lr_grid`` (for ``max_steps_relu`` steps); the others use the
    paper's learning rate (:data:`LR_A1`) for ``max_steps_other`` steps. With
    ``output_scale = alpha != 1`` every learning rate is divided by alpha: the lazy-training
    ablation (see :mod:`monosem.models`); ``hidden_scale`` multiplies the hidden initialization;
    ``init`` and ``readout_lr_scale`` select the readings of the paper's "balanced" initialization
    and "width-aware" parameterization (:func:`monosem.models.init_parameters`,
    :func:`monosem.models.mup_readout_lr_scale`).
    """
    seeds = tuple(sizes.seeds if seeds is None else seeds)
    dev = get_device(device)
    if data is None:
        data = figure1_data(sizes, device=dev)
    train_data, (xt, yt) = data
    grid = tuple(sizes.relu_lr_grid) if activation == "relu" else (LR_A1[activation],)
    steps = sizes.max_steps_relu if activation == "relu" else sizes.max_steps_other
    pairs = [(lr, s) for lr in grid for s in seeds]
    stack = MLPStack(train_data.x_train.shape[-1], sizes.width, activation, [s for _, s in pairs], output_scale=output_scale, hidden_scale=hidden_scale,
                     init=init, readout_lr_scale=readout_lr_scale, device=dev)
    cfg = a1_config(activation, max_steps=steps, batch=sizes.batch, eval_every=sizes.eval_every)
    ckpt = None
    if checkpoint_dir is not None:
        Path(checkpoint_dir).mkdir(parents=True, exist_ok=True)
        reading = "" if (init, readout_lr_scale) == ("pytorch", 1.0) else f"_{init}_r{readout_lr_scale:g}"
        ckpt = Path(checkpoint_dir) / f"figure1_{activation}_w{sizes.width}_a{output_scale:g}_h{hidden_scale:g}{reading}.pt"
    res = train(stack, train_data, cfg, lrs=[lr / output_scale for lr, _ in pairs], checkpoint=ckpt, progress=progress, desc=activation)
    models = res.models()
    val = res.best_value.tolist()
    test = mse(res.stack, xt, yt).tolist()
    chosen = []
    for s in seeds:
        idx = [i for i, (_, si) in enumerate(pairs) if si == s]
        chosen.append(min(idx, key=lambda i: (val[i], i)))
    return Figure1Run(
        activation=activation,
        seeds=seeds,
        models=[models[i] for i in chosen],
        lrs=tuple(pairs[i][0] for i in chosen),
        best_step=tuple(int(res.best_step[i]) for i in chosen),
        val_mse=tuple(val[i] for i in chosen),
        test_mse=tuple(test[i] for i in chosen),
        steps=steps,
        steps_per_second=res.steps_per_second,
        seconds=res.seconds,
        n_stacked=len(pairs),
        output_scale=output_scale,
        hidden_scale=hidden_scale,
        grid_val_mse={lr: tuple(val[i] for i, (l2, _) in enumerate(pairs) if l2 == lr) for lr in grid},
    )


def relative_movement(model: MLP) -> float:
    """||W - W_0||_F / ||W_0||_F: how far the first layer moved from its initialization
    (recomputed from the model's seed). Small in the lazy (kernel) regime."""
    W0 = init_parameters(model.d, model.width, model.activation, model.seed, hidden_scale=model.hidden_scale,
                         init=model.init, dtype=torch.float64)["W"].to(model.W.device)
    W = model.W.detach().double()
    return float((W - W0).norm() / W0.norm())


def paper_profile_estimate(model_steps_per_second: dict[str, float], width: int, batch: int) -> dict[str, float]:
    """Hours of the paper profile (Appendix A.1: 6 ReLU runs of 40 000 steps, GELU/ReGLU/SwiGLU
    20 000 each, width 2 048, batch 2 048) on this machine, extrapolated from measured
    model-steps per second at ``width`` x ``batch``, assuming cost proportional to
    width x batch (the matmuls dominate). Returns hours per activation and ``"total"``."""
    scale = (2048 * 2048) / (width * batch)
    steps = {"relu": 6 * 40_000, "gelu": 20_000, "reglu": 20_000, "swiglu": 20_000}
    out = {a: steps[a] * scale / model_steps_per_second[a] / 3600 for a in steps if a in model_steps_per_second}
    out["total"] = sum(out.values())
    return out
