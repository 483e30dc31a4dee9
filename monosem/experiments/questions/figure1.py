"""Section 3.1's question, as page 03 asks it live: do the four networks of Figure 1 develop
specialized first-layer neurons, and how does their table compare with the paper's?

The Appendix A.1 runs on ``figure1_model()``: every activation is one batched run
(:func:`monosem.train.train`), the ReLU stack holding every (learning rate, seed) pair of the
learning-rate search and the others one model per seed; the ReLU learning rate is chosen per seed
by validation MSE only, as in Appendix A.1. Here too: the readings of the initialization the runs
can take (:data:`READINGS`), the Figure 1 table beside the paper's, its verdict rule, and what
page 03 shows of its live runs. The initialization ablations are :mod:`.figure1_lazy` (live) and
:mod:`.figure1_readings` (recorded, with the paper-scale runs); the sensitivity study is
:mod:`.figure1_sensitivity`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd
import torch

from ...data import figure1_model
from ...device import get_device
from ...models import MLP, MLPStack, mup_readout_lr_scale
from ...profiles import Profile, SpecializationSizes
from ...specialization import PAPER_FIGURE1, alignment, dominance, plot_neuron_weights, specialization_table, top_aligned
from ...train import LR_A1, STEP_REVISION, TrainData, a1_config, mse, train
from ..verdicts import Part, against_note
from ..estimate import DeviceModel, mlp_update_seconds
from ..registry import register_cost

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["FIGURE1_SAMPLE_SEEDS", "Figure1Run", "figure1_data", "train_figure1", "paper_profile_estimate",
           "Reading", "READINGS", "FIGURE1_READING", "STUDY_READINGS", "table_rows", "table_row", "BRANCH_NAMES", "branch_means",
           "minus_paper", "REPRODUCE_PP", "live_numbers", "figure1_frame", "figure1_row_status", "figure1_claims", "sizes_text",
           "test_mse_frame", "relu_search_frame", "table_note", "neuron_panels", "gelu_neurons_figure", "moderate_neurons_figure",
           "timing_frame", "paper_profile_text"]

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
    reading: str = ""
    #: wall seconds of the sittings before this one (a run resumed from its checkpoint):
    #: ``seconds`` is this sitting's, ``seconds + earlier_seconds`` the whole run's
    earlier_seconds: float = 0.0
    #: every trained network of the grid, validation-selected or not: ``(lr, seed, model,
    #: val_mse, test_mse)`` (the ReLU rate search keeps all of its candidates here)
    candidates: list[tuple[float, int, MLP, float, float]] = field(default_factory=list)


# --- which reading of "balanced feature-learning initialization" matches the paper -----------

@dataclass(frozen=True)
class Reading:
    """One reading of the paper's unstated "balanced feature-learning initialization" and
    "width-aware parameterization" (Section 3.1): an initialization of :mod:`monosem.models` and,
    for muP, a readout learning-rate factor ``mup_base_width / width``."""

    name: str
    init: str = "pytorch"
    hidden_scale: float = 1.0
    mup_base_width: int | None = None
    source: str = ""
    #: the readout's rate relative to the hidden layer's, fixed (not width-aware; ``None``: 1, or
    #: muP's when ``mup_base_width`` is given)
    readout_lr: float | None = None
    #: the gated value rows' initial scale relative to the gate rows
    value_scale: float = 1.0

    def readout_lr_scale(self, width: int) -> float:
        """The readout's learning rate over the hidden layer's at ``width``."""
        if self.readout_lr is not None:
            return float(self.readout_lr)
        return 1.0 if self.mup_base_width is None else mup_readout_lr_scale(width, self.mup_base_width)


#: The readings the ablation compares. Mean-field is not separate: for two-layer networks under
#: Adam it describes the same limit as muP (:func:`monosem.models.mup_readout_lr_scale`).
READINGS = (
    Reading("zero readout", source="PyTorch's nn.Linear hidden init, zero readout (Lemma 9's zero output layer); monosem.models' default"),
    Reading("small init", hidden_scale=0.1, source="the same, hidden init x 0.1 (deeper in the feature-learning regime)"),
    Reading("balanced", init="balanced", hidden_scale=0.1,
            source="|a_j| = ||(w_j, b_j)|| at init, hidden init x 0.1 (Section 4.1's conserved ||w_j||^2 - a_j^2 starts at 0)"),
    Reading("muP", mup_base_width=2048,
            source="maximal update under Adam: readout rate x 2048 / width, tuned at the paper's width 2 048 (Yang et al., Tensor Programs IV/V)"),
)

#: The reading Figure 1's networks use by default (:func:`train_figure1`): **balanced**, chosen by
#: the recorded readings ablation (``monosem/recorded/figure1_readings_w512.json`` and ``_w2048``;
#: page 03 prints its scores, :func:`.figure1_readings.ablation_verdict`), which scores each reading by its distance
#: to the paper's whole table (six rows x active share, % A >= .71, % A >= .90). The "zero
#: readout" reading (``monosem.models``' default initialization) stays available as
#: ``READINGS[0]`` (the ablations of page 03 start from it). What each unstated choice does to the
#: table is mapped by :mod:`monosem.experiments.questions.figure1_sensitivity`.
FIGURE1_READING = READINGS[2]

#: The readings the sensitivity study (:mod:`monosem.experiments.questions.figure1_sensitivity`) ranks best
#: at width 512, for the paper profile: the most cosine cells within 10 points of the paper's
#: table, and the smallest mean distance to it. ``python -m monosem readings --profile paper
#: --readings NAME`` trains one.
STUDY_READINGS = (
    Reading("readout rate x0.28", init="balanced", hidden_scale=0.1, readout_lr=round(math.sqrt(40 / 512), 4),
            source="balanced x0.1 with the readout's rate x sqrt(d / m) at m = 512 (the NTK ratio under Adam), fixed across widths"),
    Reading("value x0.3", init="balanced", hidden_scale=0.1, value_scale=0.3,
            source="balanced x0.1 with the gated value rows x 0.3 at initialization"),
)



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
    reading: Reading | None = None,
    output_scale: float = 1.0,
    hidden_scale: float | None = None,
    seeds: Sequence[int] | None = None,
    data=None,
    device: str | torch.device | None = None,
    checkpoint_dir: str | os.PathLike | None = None,
    progress: bool = True,
    step_revision: int = STEP_REVISION,
) -> Figure1Run:
    """Train ``activation``'s networks of Figure 1 (Appendix A.1) at ``sizes``.

    ReLU searches ``sizes.relu_lr_grid`` (for ``max_steps_relu`` steps); the others use the
    paper's learning rate (:data:`LR_A1`) for ``max_steps_other`` steps. ``reading`` is the
    initialization and parameterization (default :data:`FIGURE1_READING`; see :data:`READINGS`);
    ``hidden_scale`` overrides its hidden-initialization factor. With ``output_scale = alpha != 1``
    every learning rate is divided by alpha: the lazy-training ablation (see
    :mod:`monosem.models`). ``step_revision``: the training step's (``TrainConfig.step_revision``;
    the recorded Figure 1 tables whose config names none were computed with revision 1).
    """
    reading = FIGURE1_READING if reading is None else reading
    init, readout_lr_scale = reading.init, reading.readout_lr_scale(sizes.width)
    hidden_scale = reading.hidden_scale if hidden_scale is None else hidden_scale
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
    if stack.gated and reading.value_scale != 1.0:
        with torch.no_grad():  # the value rows (and their biases) only
            stack.W[:, sizes.width:] *= reading.value_scale
            stack.b[:, sizes.width:] *= reading.value_scale
    cfg = a1_config(activation, max_steps=steps, batch=sizes.batch, eval_every=sizes.eval_every, step_revision=step_revision)
    ckpt = None
    if checkpoint_dir is not None:
        Path(checkpoint_dir).mkdir(parents=True, exist_ok=True)
        tag = "" if (init, readout_lr_scale) == ("pytorch", 1.0) else f"_{init}_r{readout_lr_scale:g}"
        tag += "" if step_revision == 1 else f"_s{step_revision}"  # a revision-1 checkpoint keeps its name
        tag += "" if reading.value_scale == 1.0 else f"_v{reading.value_scale:g}"
        ckpt = Path(checkpoint_dir) / f"figure1_{activation}_w{sizes.width}_a{output_scale:g}_h{hidden_scale:g}{tag}.pt"
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
        reading=reading.name,
        earlier_seconds=res.earlier_seconds,
        candidates=[(lr, s, models[i], val[i], test[i]) for i, (lr, s) in enumerate(pairs)],
        grid_val_mse={lr: tuple(val[i] for i, (l2, _) in enumerate(pairs) if l2 == lr) for lr in grid},
    )


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


def table_rows(runs: dict[str, Figure1Run]) -> list[dict]:
    """The Figure 1 table of trained runs as plain rows (JSON-ready), one per branch and seed:
    ``{branch, seed, n_active, width, frac_A071, frac_A090, frac_D1, frac_D2, test_mse, lr}``."""
    directions = figure1_model().directions
    return [table_row(r, seed, err, lr) for run in runs.values()
            for seed, net, err, lr in zip(run.seeds, run.models, run.test_mse, run.lrs)
            for r in specialization_table(net, directions)]


def table_row(r, seed: int, test_mse: float, lr: float) -> dict:
    """One JSON-ready row of the Figure 1 table: a :class:`SpecializationRow` with its network's
    seed, test MSE and learning rate."""
    return {"branch": r.branch, "seed": seed, "n_active": r.n_active, "width": r.width,
            "frac_A071": r.frac_A071, "frac_A090": r.frac_A090, "frac_D1": r.frac_D1,
            "frac_D2": r.frac_D2, "test_mse": float(test_mse), "lr": lr}


def branch_means(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Per branch, the seed means of the active share (percent of the width), the two cosine
    fractions (percent) and the test MSE."""
    out: dict[str, dict[str, float]] = {}
    for branch in dict.fromkeys(r["branch"] for r in rows):
        mine = [r for r in rows if r["branch"] == branch]
        k = len(mine)
        out[branch] = {"active_pct": sum(100 * r["n_active"] / r["width"] for r in mine) / k,
                       "A071_pct": sum(100 * r["frac_A071"] for r in mine) / k,
                       "A090_pct": sum(100 * r["frac_A090"] for r in mine) / k,
                       "test_mse": sum(r["test_mse"] for r in mine) / k}
    return out


def minus_paper(m: dict[str, float], paper_row: tuple[float, float, float]) -> tuple[float, float, float]:
    """One branch's seed means (:func:`branch_means`) minus the paper's row, in percentage
    points: active share of 2 048 neurons, % with A >= .71, % with A >= .90."""
    n_act, a71, a90 = paper_row
    return m["active_pct"] - 100 * n_act / 2048, m["A071_pct"] - a71, m["A090_pct"] - a90


#: a reading "reproduces" a column of the paper's table when it lands within this many points
REPRODUCE_PP = 10.0

#: the branches' names as the tables print them
BRANCH_NAMES = {"relu": "ReLU", "gelu": "GELU", "reglu gate": "ReGLU gate", "reglu value": "ReGLU value",
                "swiglu gate": "SwiGLU gate", "swiglu value": "SwiGLU value"}


def figure1_frame(rows: list[dict], paper: dict | None = None, *, test_mse: bool = True) -> pd.DataFrame:
    """The Figure 1 table of :func:`table_rows` as a DataFrame, one row per branch: the active share
    of the width and the four fractions as "mean ± half the seed range" (percent), the paper's
    three legible columns beside them and, with ``test_mse``, the seeds' test MSEs."""
    paper = PAPER_FIGURE1 if paper is None else paper

    def spread(values) -> str:
        v = 100 * np.asarray(values, dtype=float)
        return f"{v.mean():.1f} ± {(v.max() - v.min()) / 2:.1f}"

    out = []
    for branch in dict.fromkeys(r["branch"] for r in rows):
        mine = [r for r in rows if r["branch"] == branch]
        row = {"branch": BRANCH_NAMES.get(branch, branch),
               "active %": spread([r["n_active"] / r["width"] for r in mine]),
               "A ≥ .71 %": spread([r["frac_A071"] for r in mine]), "A ≥ .90 %": spread([r["frac_A090"] for r in mine]),
               "D > 1 %": spread([r["frac_D1"] for r in mine]), "D > 2 %": spread([r["frac_D2"] for r in mine])}
        p = paper.get(branch)
        row["paper: active / A ≥ .71 / A ≥ .90 %"] = f"{100 * p[0] / 2048:.1f} / {p[1]:.1f} / {p[2]:.1f}" if p else ""
        if test_mse:
            row["test MSE"] = " / ".join(f"{r['test_mse']:.3g}" for r in mine)
        out.append(row)
    return pd.DataFrame(out)


def figure1_part(rows: list[dict], paper_row: tuple[float, float, float]):
    """One row of the paper's Figure 1 as a :class:`~..verdicts.Part`: the statistic is the larger
    distance (points) of the two cosine columns (% of the active neurons with A >= .71 and with
    A >= .90) from the paper's, on the seed means and seed by seed; it holds within
    :data:`REPRODUCE_PP` points."""
    def miss(rs) -> float:
        return max(abs(100 * float(np.mean([r["frac_A071"] for r in rs])) - paper_row[1]),
                   abs(100 * float(np.mean([r["frac_A090"] for r in rs])) - paper_row[2]))

    return Part("largest miss of the two cosine columns (points)", miss(rows) if rows else None,
                tuple(miss([r]) for r in rows), high=REPRODUCE_PP, closed=True)


def figure1_row_status(rows: list[dict], paper_row: tuple[float, float, float]) -> tuple[str, str]:
    """Whether one row of the paper's Figure 1 reproduces, and the numbers behind the answer.

    The row holds where both cosine columns (% of the active neurons with A >= .71 and with
    A >= .90) lie within :data:`REPRODUCE_PP` points of the paper's (:func:`figure1_part`); the
    seeds are the runs of the book's one rule (:func:`~..verdicts.judge`): it **reproduces** when
    the seed means hold and at least 4 of 5 seeds do, is **indicated** on fewer seeds, and so on.
    The active share is left out: it depends on the width, which the reduced profiles change.

    ``rows`` are one branch's rows of :func:`table_rows` (one per seed); returns
    ``(status, evidence)``.
    """
    if not rows:
        return "not computed", "no run"
    part = figure1_part(rows, paper_row)
    a71 = 100 * float(np.mean([r["frac_A071"] for r in rows]))
    a90 = 100 * float(np.mean([r["frac_A090"] for r in rows]))
    d71, d90 = a71 - paper_row[1], a90 - paper_row[2]
    n = len(rows)
    within = sum(part.holds(v) for v in part.values)
    evidence = (f"{a71:.1f} % / {a90:.1f} % ({d71:+.1f} / {d90:+.1f} points); {within} of {n} "
                f"seed{'s' if n > 1 else ''} within {REPRODUCE_PP:.0f}"
                + against_note(part.holds(part.mean), [part.holds(v) for v in part.values], "seed"))
    return part.status, evidence


def figure1_claims(rows: list[dict], page: str, profile: str, width: int, batch: int, n: int, paper: dict | None = None,
                   detail: str = "") -> list:
    """One :class:`~monosem.experiments.verdicts.Claim` per row of the paper's Figure 1, judged on
    ``rows`` (:func:`table_rows`, or a recorded run's rows) by :func:`figure1_row_status`, at the
    scale ``profile``, ``width``, ``batch``, ``n`` (training size) and ``detail``."""
    from ..verdicts import Claim

    paper = PAPER_FIGURE1 if paper is None else paper
    out = []
    for branch, row in paper.items():
        mine = [r for r in rows if r["branch"] == branch]
        _, evidence = figure1_row_status(mine, row)
        claim = f"Figure 1, {BRANCH_NAMES.get(branch, branch)}: {row[1]:.1f} % / {row[2]:.1f} % of active neurons with A ≥ 0.71 / 0.90"
        out.append(Claim.judged(page, claim, [figure1_part(mine, row)], evidence, profile=profile, width=width, batch=batch,
                                n=n, unit="seed", detail=detail))
    return out


def live_numbers(rows: list[dict], paper: dict | None = None) -> dict[str, str]:
    """The numbers page 03's remarks quote about a live table (:func:`table_rows`), for ``glue``:
    per branch "A ≥ .71 / A ≥ .90 % (seed means) against the paper's", the range of the active
    share over branches, and the largest half seed-range of the cosine columns (ReLU apart)."""
    paper = PAPER_FIGURE1 if paper is None else paper
    means = branch_means(rows)
    out = {}
    half = {"relu": 0.0, "gated": 0.0}
    for b, (_, a71, a90) in paper.items():
        if b not in means:
            continue
        m = means[b]
        out[b] = f"{m['A071_pct']:.1f} % / {m['A090_pct']:.1f} % (paper {a71:.1f} % / {a90:.1f} %)"
        mine = [r for r in rows if r["branch"] == b]
        for key in ("frac_A071", "frac_A090"):
            v = [100 * r[key] for r in mine]
            group = "relu" if b == "relu" else "gated"
            half[group] = max(half[group], (max(v) - min(v)) / 2)
    active = [m["active_pct"] for m in means.values()]
    out["active_range"] = f"{min(active):.0f}–{max(active):.0f} %"
    ungelu = [100 * paper[b][0] / 2048 for b in paper if b != "gelu"]
    out["paper_active"] = (f"{min(ungelu):.0f}–{max(ungelu):.0f} % for ReLU, ReGLU and SwiGLU and "
                           f"{100 * paper['gelu'][0] / 2048:.0f} % for GELU")
    out["halfrange_relu"], out["halfrange_gated"] = f"{half['relu']:.1f}", f"{half['gated']:.1f}"
    return out


def sizes_text(sizes: SpecializationSizes) -> str:
    """The line page 03 prints about its Figure 1 sizes: width, training set, batch, steps, seeds."""
    return (f"width {sizes.width}, n_train {sizes.n_train}, batch {sizes.batch}, "
            f"steps ReLU {sizes.max_steps_relu} / others {sizes.max_steps_other}, seeds {sizes.seeds}")


def test_mse_frame(runs: dict[str, Figure1Run]) -> pd.DataFrame:
    """Per activation and seed (the index), the selected network's initial learning rate, best
    checkpoint step and test MSE (Appendix A.1's validation-selected checkpoint)."""
    rows = [{"activation": act, "seed": sd, "initial rate": lr, "best step": st, "test MSE": e}
            for act, run in runs.items() for sd, lr, st, e in zip(run.seeds, run.lrs, run.best_step, run.test_mse)]
    return pd.DataFrame(rows).set_index(["activation", "seed"])


def relu_search_frame(run: Figure1Run) -> pd.DataFrame:
    """The ReLU learning-rate search: the validation MSE of every rate (columns) and seed (rows)."""
    return pd.DataFrame(run.grid_val_mse, index=pd.Index(run.seeds, name="seed")).rename_axis(columns="ReLU rate")


def table_note(profile: Profile) -> str:
    """The lines printed above the live Figure 1 table: the reduced scale against the paper's
    sizes (Appendix A.1) where it applies, then the width and the number of seeds."""
    sizes = profile.specialization
    lines = []
    if profile.reduced_scale:
        lines.append(f"{profile.name} profile: reduced scale (width {sizes.width}, batch {sizes.batch}, {sizes.max_steps_relu} / "
                     f"{sizes.max_steps_other} steps);\nthe paper uses width 2048, batch 2048, 40 000 / 20 000 steps.")
    lines.append(f"width {sizes.width}, {len(sizes.seeds)} seed(s); mean ± half-range over seeds, in percent")
    return "\n".join(lines)


def neuron_panels(W: torch.Tensor, titles: list[str], suptitle: str, *, xlabel: str | None = None, **grid) -> Figure:
    """A figure of one panel of coordinate-wise |w| per row of ``W`` (the Figure 1 model's
    coordinates; :func:`monosem.specialization.plot_neuron_weights`), in the book's style."""
    from ... import plots

    with plots.paper_style():
        fig, axes = plots.panel_grid(len(W), **grid)
        plot_neuron_weights(axes, W, figure1_model().K, titles=titles)
        for ax in axes if xlabel else ():
            ax.set_xlabel(xlabel)
        fig.suptitle(suptitle)
    return fig


def gelu_neurons_figure(net: MLP, k: int = 4) -> Figure | None:
    """Figure 1 (bottom): the ``k`` highest-importance active neurons of a GELU network with
    A_j >= 0.90, one panel each, or ``None`` when no active neuron is that aligned."""
    directions = figure1_model().directions
    top = top_aligned(net, directions, k=k, min_A=0.90)
    if len(top) == 0:
        return None
    A, c = alignment(net.W.detach()[top], directions)
    titles = [f"neuron {int(j)}: A={a:.2f}, c={int(ci) + 1}" for j, a, ci in zip(top, A, c)]
    return neuron_panels(net.W.detach()[top], titles, "Highest-importance active GELU neurons with $A_j \\geq 0.90$",
                         xlabel="coordinate", sharey=True)


def moderate_neurons_figure(runs: dict[str, Figure1Run], k: int = 4) -> Figure | None:
    """Figure 5: the highest-importance active neurons of the first seed's GELU, then ReLU,
    network with a moderate cosine 0.4 <= A_j < 0.71 and a dominant coordinate D_j > 2 (``k`` in
    all), or ``None`` when there is none."""
    directions = figure1_model().directions
    shown = []
    for act in ("gelu", "relu"):
        net = runs[act].models[0]
        shown += [(act, int(j), net.W.detach()[j]) for j in top_aligned(net, directions, k=k, min_A=0.4, max_A=0.7099, min_D=2.0)]
    shown = shown[:k]
    if not shown:
        return None
    W = torch.stack([w for _, _, w in shown])
    A, _ = alignment(W, directions)
    D = dominance(W, directions)
    titles = [f"{a} {j}: A={x:.2f}, D={y:.1f}" for (a, j, _), x, y in zip(shown, A, D)]
    return neuron_panels(W, titles, "Moderate cosine alignment, clearly dominant predictive coordinate")


def timing_frame(runs: dict[str, Figure1Run]) -> pd.DataFrame:
    """Per activation: the networks trained in one stack, the steps, the wall seconds and the
    model-steps per second (steps per second times the stack's size)."""
    return pd.DataFrame({"networks in the stack": {a: r.n_stacked for a, r in runs.items()}, "steps": {a: r.steps for a, r in runs.items()},
                         "seconds": {a: r.seconds for a, r in runs.items()},
                         "model-steps per second": {a: r.steps_per_second * r.n_stacked for a, r in runs.items()}})


def paper_profile_text(runs: dict[str, Figure1Run], sizes: SpecializationSizes) -> str:
    """The paper profile's estimated hours on this machine (:func:`paper_profile_estimate`, from
    the throughput of ``runs``), as page 03 prints it."""
    est = paper_profile_estimate({a: r.steps_per_second * r.n_stacked for a, r in runs.items()}, sizes.width, sizes.batch)
    return (f"paper profile (width 2048, batch 2048, 6 x 40 000 ReLU + 3 x 20 000 steps)\n"
            f"on this machine: about {est['total']:.2g} h")


def page_cost(P: Profile, device: DeviceModel) -> dict[str, float]:
    """Page 03's heavy work (:mod:`~..estimate`): one stack per activation (its learning rates x
    seeds train together) for Figure 1, and the ablations' networks."""
    s = P.specialization
    d = figure1_model().d
    steps = {"relu": s.max_steps_relu, "gelu": s.max_steps_other, "reglu": s.max_steps_other, "swiglu": s.max_steps_other}
    rates = {a: (len(s.relu_lr_grid) if a == "relu" else 1) for a in steps}
    main = sum(steps[a] * mlp_update_seconds(s.width, s.batch, d, a, device, rates[a] * len(s.seeds)) for a in steps)
    ablation = sum(steps[a] * mlp_update_seconds(s.width, s.batch, d, a, device, rates[a])
                   for a in s.ablation_activations for _ in s.lazy_output_scales)
    ablation += sum(steps[a] * mlp_update_seconds(s.width, s.batch, d, a, device, rates[a]) for a in s.small_init_activations)
    return {"networks (Figure 1)": main, "networks (ablations)": ablation}


register_cost("03_specialization", page_cost)
