"""The Section 3.1 / Appendix A.1 runs: the four networks on ``figure1_model()``.

Every activation is one batched run (:func:`monosem.train.train`): the ReLU stack holds every
(learning rate, seed) pair of the learning-rate search, the others one model per seed. The
ReLU learning rate is chosen per seed by validation MSE only, as in Appendix A.1.

One module for Section 3.1's question, as page 03 asks it: the runs, the readings of the
initialization, the table beside the paper's and its verdicts. The sensitivity study is its own
question (:mod:`.figure1_sensitivity`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from ...data import figure1_model
from ...device import get_device
from ...models import MLP, MLPStack, init_parameters, mup_readout_lr_scale
from ...profiles import SpecializationSizes
from ...specialization import PAPER_FIGURE1, active_set, importance, specialization_table, top_aligned
from ...train import LR_A1, STEP_REVISION, TrainData, a1_config, mse, train

__all__ = ["figure1_rows", "FIGURE1_SAMPLE_SEEDS", "Figure1Run", "figure1_data", "train_figure1", "relative_movement", "paper_profile_estimate",
           "Reading", "READINGS", "FIGURE1_READING", "STUDY_READINGS", "reading_ablation", "ablation_scores", "ablation_frame", "ablation_summary",
           "ablation_verdict", "table_rows", "figure_neurons", "paper_comparison_frame", "recorded_name", "paper_scale_verdict",
           "rate_rows", "rate_frame", "importance_spread", "importance_spread_frame", "SPREAD_FRACTIONS",
           "figure1_frame", "figure1_row_status", "figure1_claims"]

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
#: page 03 prints its scores, :func:`ablation_verdict`), which scores each reading by its distance
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



def recorded_name(profile: str, width: int, reading: str | None = None) -> str:
    """The recorded result's name of a Figure 1 table run: ``figure1_readings_w<width>`` at the
    cpu profile's sizes (the readings ablation), ``figure1_readings_<profile>_w<width>`` at
    another profile's (e.g. the paper profile's run of the chosen reading), with ``_<reading>``
    appended for one reading other than :data:`FIGURE1_READING`."""
    name = f"figure1_readings_w{width}" if profile == "cpu" else f"figure1_readings_{profile}_w{width}"
    if reading is not None and reading != FIGURE1_READING.name:
        name += "_" + "".join(ch if ch.isalnum() else "_" for ch in reading).strip("_")
    return name


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


def table_rows(runs: dict[str, Figure1Run]) -> list[dict]:
    """The Figure 1 table of trained runs as plain rows (JSON-ready), one per branch and seed:
    ``{branch, seed, n_active, width, frac_A071, frac_A090, frac_D1, frac_D2, test_mse, lr}``."""
    directions = figure1_model().directions
    return [_row(r, seed, err, lr) for run in runs.values()
            for seed, net, err, lr in zip(run.seeds, run.models, run.test_mse, run.lrs)
            for r in specialization_table(net, directions)]


def _row(r, seed: int, test_mse: float, lr: float) -> dict:
    """One JSON-ready row of the Figure 1 table: a :class:`SpecializationRow` with its network's
    seed, test MSE and learning rate."""
    return {"branch": r.branch, "seed": seed, "n_active": r.n_active, "width": r.width,
            "frac_A071": r.frac_A071, "frac_A090": r.frac_A090, "frac_D1": r.frac_D1,
            "frac_D2": r.frac_D2, "test_mse": float(test_mse), "lr": lr}


def rate_rows(run: Figure1Run) -> list[dict]:
    """The Figure 1 rows of every candidate of a learning-rate search (the ReLU grid), selected or
    not, as :func:`table_rows` gives them plus ``val_mse`` and ``selected``: how the table
    depends on the rate that validation picks (the paper reports picking 0.004)."""
    directions = figure1_model().directions
    chosen = set(zip(run.lrs, run.seeds))
    return [_row(r, seed, err, lr) | {"val_mse": float(val), "selected": (lr, seed) in chosen}
            for lr, seed, net, val, err in run.candidates for r in specialization_table(net, directions)]


def rate_frame(rows: list[dict]) -> pd.DataFrame:
    """:func:`rate_rows` as a table, one row per rate of the search (seed means): validation and
    test MSE, active share and the two cosine columns (percent), and whether validation picked it."""
    df = pd.DataFrame(rows)
    df["active %"] = 100 * df["n_active"] / df["width"]
    df["A ≥ .71 %"], df["A ≥ .90 %"] = 100 * df["frac_A071"], 100 * df["frac_A090"]
    out = df.groupby("lr").agg(**{"val MSE": ("val_mse", "mean"), "test MSE": ("test_mse", "mean"), "active %": ("active %", "mean"),
                                  "A ≥ .71 %": ("A ≥ .71 %", "mean"), "A ≥ .90 %": ("A ≥ .90 %", "mean"), "selected": ("selected", "any")})
    out.index.name = "ReLU rate"
    return out


#: shares of the total importance at which :func:`importance_spread` counts the neurons needed
SPREAD_FRACTIONS = (0.5, 0.9, 0.99, 0.999)


def importance_spread_frame(spread: dict[str, dict[str, float]]) -> pd.DataFrame:
    """:func:`importance_spread` as a table: one row per activation, one column per share of the
    importance, the % of the width carrying it."""
    df = pd.DataFrame(spread).T
    df.columns = [f"% of width carrying {float(c) * 100:g} %" for c in df.columns]
    df.index.name = "activation"
    return df


def importance_spread(runs: dict[str, Figure1Run]) -> dict[str, dict[str, float]]:
    """How concentrated each network's importance I_j is (first seed): per activation, the
    percentage of the width needed to carry each share of :data:`SPREAD_FRACTIONS` of the total
    (at 0.999 it is the paper's active share). A network whose importance is spread evenly needs
    most of its neurons for every share; the paper's 22-30 % active at 0.999 means that most of
    its neurons carry almost nothing."""
    out = {}
    for act, run in runs.items():
        imp = importance(run.models[0])
        out[act] = {f"{f:g}": 100 * int(active_set(imp, f).numel()) / run.models[0].width for f in SPREAD_FRACTIONS}
    return out


def figure_neurons(runs: dict[str, Figure1Run], k: int = 4) -> dict[str, list[dict]]:
    """The neurons page 03 draws, of the first seed, as JSON-ready weight rows: Figure 1 bottom
    (the ``k`` most important active GELU neurons with A_j >= 0.90) and Figure 5 (GELU, then
    ReLU, neurons with 0.4 <= A_j < 0.71 and D_j > 2; ``k`` in all)."""
    directions = figure1_model().directions
    out: dict[str, list[dict]] = {"figure1": [], "figure5": []}
    if "gelu" in runs:
        net = runs["gelu"].models[0]
        for j in top_aligned(net, directions, k=k, min_A=0.90):
            out["figure1"].append({"activation": "gelu", "neuron": int(j), "w": net.W.detach()[j].double().tolist()})
    for act in ("gelu", "relu"):
        if act in runs:
            net = runs[act].models[0]
            for j in top_aligned(net, directions, k=k, min_A=0.4, max_A=0.7099, min_D=2.0):
                out["figure5"].append({"activation": act, "neuron": int(j), "w": net.W.detach()[j].double().tolist()})
    out["figure5"] = out["figure5"][:k]
    return out


def reading_ablation(
    sizes: SpecializationSizes,
    readings: Sequence[Reading] = READINGS,
    *,
    data=None,
    device: str | torch.device | None = None,
    checkpoint_dir: str | os.PathLike | None = None,
    progress: bool = True,
    neurons: bool = False,
    step_revision: int = STEP_REVISION,
) -> dict:
    """Train the four Figure 1 networks of every seed under each reading at ``sizes`` and return
    the whole Figure 1 table per reading: ``{"width", "seeds", "readings": {name: {"rows":
    [{branch, seed, n_active, width, frac_A071, frac_A090, frac_D1, frac_D2, test_mse, lr}],
    "seconds", "earlier_seconds", "source"}}}``. ``seconds`` is the training wall time, the earlier
    sittings of networks resumed from ``checkpoint_dir`` included; ``earlier_seconds`` is those.
    With ``neurons`` each reading also keeps :func:`figure_neurons`, ``relu_rates`` (the ReLU table
    at every rate of the search, :func:`rate_rows`) and :func:`importance_spread`. A muP reading at
    its base width is the plain one and is skipped. ``step_revision`` as in :func:`train_figure1`."""
    dev = get_device(device)
    data = data if data is not None else figure1_data(sizes, device=dev)
    out = {"width": sizes.width, "batch": sizes.batch, "seeds": list(sizes.seeds), "step_revision": int(step_revision), "readings": {}}
    for reading in readings:
        if reading.mup_base_width == sizes.width:
            continue
        runs = {act: train_figure1(sizes, act, reading=reading, data=data, device=dev, checkpoint_dir=checkpoint_dir,
                                   progress=progress, step_revision=step_revision) for act in ("relu", "gelu", "reglu", "swiglu")}
        # the whole runs' training time, earlier sittings of resumed ones included
        out["readings"][reading.name] = {"rows": table_rows(runs), "seconds": sum(r.seconds + r.earlier_seconds for r in runs.values()),
                                         "earlier_seconds": sum(r.earlier_seconds for r in runs.values()),
                                         "source": reading.source,
                                         "lrs": {act: list(run.lrs) for act, run in runs.items()}}
        if neurons:
            out["readings"][reading.name]["neurons"] = figure_neurons(runs)
            out["readings"][reading.name]["relu_rates"] = rate_rows(runs["relu"])
            out["readings"][reading.name]["importance_spread"] = importance_spread(runs)
    return out


def paper_comparison_frame(recorded: dict, live_rows: list[dict] | None = None, paper: dict | None = None) -> pd.DataFrame:
    """Figure 1 at the paper's scale (a recorded :func:`reading_ablation` of one reading at the
    ``paper`` sizes) beside the paper's table and, when given, the live profile's rows: one row per
    branch, the active share and the two cosine columns (percent) of each, and the recorded run's
    differences from the paper (percentage points)."""
    paper = PAPER_FIGURE1 if paper is None else paper
    name = next(iter(recorded["readings"]))
    rec = _branch_means(recorded["readings"][name]["rows"])
    live = _branch_means(live_rows) if live_rows else {}
    out = []
    for b, (n_act, a71, a90) in paper.items():
        if b not in rec:
            continue
        m = rec[b]
        row = {"branch": _BRANCH_NAMES.get(b, b), "paper active %": 100 * n_act / 2048, "paper A ≥ .71 %": a71, "paper A ≥ .90 %": a90,
               "recorded active %": m["active_pct"], "recorded A ≥ .71 %": m["A071_pct"], "recorded A ≥ .90 %": m["A090_pct"]}
        d = _minus_paper(m, paper[b])
        row |= {"minus paper: active": d[0], "minus paper: A ≥ .71": d[1], "minus paper: A ≥ .90": d[2]}
        if b in live:
            row |= {"live active %": live[b]["active_pct"], "live A ≥ .71 %": live[b]["A071_pct"], "live A ≥ .90 %": live[b]["A090_pct"]}
        out.append(row)
    return pd.DataFrame(out).set_index("branch")


def _ordered(readings) -> list[str]:
    """Reading names in :data:`READINGS` order (the default first), others after: a recorded
    result read back from JSON may hold them in another order."""
    known = [r.name for r in READINGS if r.name in readings]
    return known + [n for n in readings if n not in known]


def _branch_means(rows: list[dict]) -> dict[str, dict[str, float]]:
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


def _minus_paper(m: dict[str, float], paper_row: tuple[float, float, float]) -> tuple[float, float, float]:
    """One branch's seed means (:func:`_branch_means`) minus the paper's row, in percentage
    points: active share of 2 048 neurons, % with A >= .71, % with A >= .90."""
    n_act, a71, a90 = paper_row
    return m["active_pct"] - 100 * n_act / 2048, m["A071_pct"] - a71, m["A090_pct"] - a90


def ablation_scores(result: dict, paper: dict | None = None) -> dict[str, dict[str, float]]:
    """How far each reading's table is from the paper's: over the six branches and the three
    columns the paper prints legibly (active share of 2 048 neurons, % with A >= .71, % with
    A >= .90), the mean and the largest absolute difference in percentage points, and the ReGLU
    gate's own mean difference. Smaller is closer."""
    paper = PAPER_FIGURE1 if paper is None else paper
    scores = {}
    for name, rec in result["readings"].items():
        means = _branch_means(rec["rows"])
        diffs, gate = [], []
        for branch, row in paper.items():
            if branch not in means:
                continue
            d = [abs(v) for v in _minus_paper(means[branch], row)]
            diffs += d
            if branch == "reglu gate":
                gate = d
        scores[name] = {"mean_pp": sum(diffs) / len(diffs), "max_pp": max(diffs),
                        "reglu_gate_pp": sum(gate) / len(gate) if gate else float("nan")}
    return scores


def ablation_frame(result: dict, paper: dict | None = None) -> pd.DataFrame:
    """The readings ablation as a table: one row per branch, the paper's and each reading's
    "active / A ≥ .71 / A ≥ .90" (percent, seed means)."""
    paper = PAPER_FIGURE1 if paper is None else paper
    names = _ordered(result["readings"])
    means = {n: _branch_means(result["readings"][n]["rows"]) for n in names}
    cell = lambda m: f"{m['active_pct']:.0f} / {m['A071_pct']:.0f} / {m['A090_pct']:.0f}"  # noqa: E731
    out = []
    for b, (n_act, a71, a90) in paper.items():
        row = {"branch": _BRANCH_NAMES.get(b, b), "paper": f"{100 * n_act / 2048:.0f} / {a71:.0f} / {a90:.0f}"}
        row |= {n: cell(means[n][b]) if b in means[n] else "" for n in names}
        out.append(row)
    return pd.DataFrame(out).set_index("branch")


def ablation_summary(result: dict, paper: dict | None = None) -> pd.DataFrame:
    """Per reading: its distance to the paper's table (mean and largest, points; :func:`ablation_scores`),
    the test MSE of each activation (seed means) and the training time in minutes."""
    scores = ablation_scores(result, paper)
    out = []
    for n in _ordered(result["readings"]):
        rec = result["readings"][n]
        means = _branch_means(rec["rows"])
        row = {"reading": n, "mean distance (points)": scores[n]["mean_pp"], "largest (points)": scores[n]["max_pp"]}
        row |= {f"{b} test MSE": v["test_mse"] for b, v in means.items() if not b.endswith("value")}
        row["minutes"] = rec["seconds"] / 60
        out.append(row)
    return pd.DataFrame(out).set_index("reading")


#: a reading "reproduces" a column of the paper's table when it lands within this many points
REPRODUCE_PP = 10.0


def ablation_verdict(result: dict) -> str:
    """The ablation's answer in words, computed from its scores: the closest reading overall, its
    margin over the default (the first reading), and whether any reading puts the ReGLU gate
    within :data:`REPRODUCE_PP` points of the paper on all three columns."""
    scores = ablation_scores(result)
    names = _ordered(scores)
    best = min(names, key=lambda n: scores[n]["mean_pp"])
    default = names[0]
    lines = [f"width {result['width']}: closest to the paper overall is {best!r},",
             f"  mean |difference| {scores[best]['mean_pp']:.1f} points over the six rows x three columns,",
             f"  largest {scores[best]['max_pp']:.1f}"]
    if best != default:
        per_seed = {n: [ablation_scores({"readings": {n: {"rows": [r for r in result["readings"][n]["rows"] if r["seed"] == s]}}})[n]["mean_pp"]
                        for s in result["seeds"]] for n in (best, default)}
        wins = sum(b < d for b, d in zip(per_seed[best], per_seed[default]))
        lines.append(f"  the default {default!r} is at {scores[default]['mean_pp']:.1f} points: "
                     f"{scores[default]['mean_pp'] - scores[best]['mean_pp']:.1f} points farther;")
        lines.append(f"  {best!r} is closer on {wins} of {len(result['seeds'])} seeds;")
        lines.append(f"  per seed, {best!r} vs the default:")
        lines.append("    " + ", ".join(f"{b:.1f} vs {d:.1f}" for b, d in zip(per_seed[best], per_seed[default])))
    gate_ok = []
    for name, rec in result["readings"].items():
        m = _branch_means(rec["rows"]).get("reglu gate")
        if m is None:
            continue
        if max(abs(v) for v in _minus_paper(m, PAPER_FIGURE1["reglu gate"])) <= REPRODUCE_PP:
            gate_ok.append(name)
    best_gate = min(names, key=lambda n: scores[n]["reglu_gate_pp"])
    lines.append(f"  ReGLU gate within {REPRODUCE_PP:.0f} points on all three columns: "
                 + (", ".join(repr(n) for n in gate_ok) if gate_ok else "no reading"))
    lines.append(f"  (closest on the gate: {best_gate!r}, mean {scores[best_gate]['reglu_gate_pp']:.1f} points)")
    return "\n".join(lines)


def paper_scale_verdict(recorded: dict, paper: dict | None = None) -> str:
    """The paper-scale run's answer in words, computed from its table: which of the six rows land
    within :data:`REPRODUCE_PP` points of the paper on all three columns (active share, % with
    A >= .71, % with A >= .90), which do not and by how much at most, and whether the ReGLU
    gate / value split (a strongly aligned gate over a weakly aligned value branch) appears."""
    paper = PAPER_FIGURE1 if paper is None else paper
    name = next(iter(recorded["readings"]))
    means = _branch_means(recorded["readings"][name]["rows"])
    short = {"relu": "ReLU", "gelu": "GELU", "reglu gate": "ReGLU gate", "reglu value": "ReGLU value",
             "swiglu gate": "SwiGLU gate", "swiglu value": "SwiGLU value"}
    near, far = [], []
    for b, row in paper.items():
        if b not in means:
            continue
        worst = max(abs(v) for v in _minus_paper(means[b], row))
        (near if worst <= REPRODUCE_PP else far).append((short.get(b, b), worst))
    lines = [f"within {REPRODUCE_PP:.0f} points of the paper on all three columns: "
             + (", ".join(n for n, _ in near) if near else "no row")]
    lines += [f"farther: {n} (up to {w:.0f} points)" for n, w in far]
    if "reglu gate" in means and "reglu value" in means:
        g, v = means["reglu gate"], means["reglu value"]
        pg, pv = paper["reglu gate"], paper["reglu value"]
        lines.append("ReGLU gate minus value:")
        lines.append(f"  % with A >= .71: {g['A071_pct'] - v['A071_pct']:+.1f} points (the paper's {pg[1] - pv[1]:+.1f})")
        lines.append(f"  % with A >= .90: {g['A090_pct'] - v['A090_pct']:+.1f} points (the paper's {pg[2] - pv[2]:+.1f})")
    return "\n".join(lines)


_BRANCH_NAMES = {"relu": "ReLU", "gelu": "GELU", "reglu gate": "ReGLU gate", "reglu value": "ReGLU value",
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
        row = {"branch": _BRANCH_NAMES.get(branch, branch),
               "active %": spread([r["n_active"] / r["width"] for r in mine]),
               "A ≥ .71 %": spread([r["frac_A071"] for r in mine]), "A ≥ .90 %": spread([r["frac_A090"] for r in mine]),
               "D > 1 %": spread([r["frac_D1"] for r in mine]), "D > 2 %": spread([r["frac_D2"] for r in mine])}
        p = paper.get(branch)
        row["paper: active / A ≥ .71 / A ≥ .90 %"] = f"{100 * p[0] / 2048:.1f} / {p[1]:.1f} / {p[2]:.1f}" if p else ""
        if test_mse:
            row["test MSE"] = " / ".join(f"{r['test_mse']:.3g}" for r in mine)
        out.append(row)
    return pd.DataFrame(out)


def figure1_row_status(rows: list[dict], paper_row: tuple[float, float, float]) -> tuple[str, str]:
    """Whether one row of the paper's Figure 1 reproduces, and the numbers behind the answer.

    The rule: the row **reproduces** when the seed means of both cosine columns (% of the active
    neurons with A >= .71 and with A >= .90) lie within :data:`REPRODUCE_PP` points of the paper's;
    it **does not reproduce** when, for every seed, at least one of the two lies farther than that;
    otherwise (the means miss but some seed lands within) it is **not settled**. The active share
    is left out: it depends on the width, which the reduced profiles change.

    ``rows`` are one branch's rows of :func:`table_rows` (one per seed); returns
    ``(status, evidence)``.
    """
    if not rows:
        return "not computed", "no run"

    def misses(rs) -> tuple[float, float]:
        return (100 * float(np.mean([r["frac_A071"] for r in rs])) - paper_row[1],
                100 * float(np.mean([r["frac_A090"] for r in rs])) - paper_row[2])

    d71, d90 = misses(rows)
    within = max(abs(d71), abs(d90)) <= REPRODUCE_PP
    seeds_within = sum(max(abs(v) for v in misses([r])) <= REPRODUCE_PP for r in rows)
    if within:
        status = "reproduces"
    elif seeds_within == 0:
        status = "does not reproduce"
    else:
        status = "not settled"
    a71 = 100 * float(np.mean([r["frac_A071"] for r in rows]))
    a90 = 100 * float(np.mean([r["frac_A090"] for r in rows]))
    n = len(rows)
    evidence = (f"{a71:.1f} % / {a90:.1f} % ({d71:+.1f} / {d90:+.1f} points); {seeds_within} of {n} "
                f"seed{'s' if n > 1 else ''} within {REPRODUCE_PP:.0f}")
    return status, evidence


def figure1_claims(rows: list[dict], page: str, scale: str, paper: dict | None = None) -> list:
    """One :class:`~monosem.experiments.verdicts.Claim` per row of the paper's Figure 1, judged on
    ``rows`` (:func:`table_rows`, or a recorded run's rows) by :func:`figure1_row_status`."""
    from ..verdicts import Claim

    paper = PAPER_FIGURE1 if paper is None else paper
    out = []
    for branch, row in paper.items():
        status, evidence = figure1_row_status([r for r in rows if r["branch"] == branch], row)
        claim = f"Figure 1, {_BRANCH_NAMES.get(branch, branch)}: {row[1]:.1f} % / {row[2]:.1f} % of active neurons with A ≥ 0.71 / 0.90"
        out.append(Claim(page, claim, scale, status, evidence))
    return out


def paper_scale_numbers(recorded: dict, paper: dict | None = None) -> dict[str, str]:
    """The numbers page 03's prose quotes about the paper-scale run, computed from its record and
    formatted for ``glue``: per branch ``"<b>"`` = "active / A ≥ .71 / A ≥ .90" (percent) and
    ``"<b> paper"`` the paper's; the ReGLU gate-minus-value gaps (``gap71``, ``gap90`` and the
    paper's); the rate validation picked (``relu_rate``), its validation MSE, that of 0.004 and their
    ratio; the ReLU cosine columns at the smallest and largest searched rate; the ReLU share of the
    width carrying 90 % and 99 % of the importance; the mean distance to the paper's table."""
    paper = PAPER_FIGURE1 if paper is None else paper
    entry = next(iter(recorded["readings"].values()))
    means = _branch_means(entry["rows"])
    out = {}
    for b, (n_act, a71, a90) in paper.items():
        m = means[b]
        out[b] = f"{m['active_pct']:.1f} % / {m['A071_pct']:.1f} % / {m['A090_pct']:.1f} %"
        out[f"{b} paper"] = f"{100 * n_act / 2048:.1f} % / {a71:.1f} % / {a90:.1f} %"
    g, v = means["reglu gate"], means["reglu value"]
    pg, pv = paper["reglu gate"], paper["reglu value"]
    out |= {"gap71": f"{g['A071_pct'] - v['A071_pct']:+.1f}", "gap90": f"{g['A090_pct'] - v['A090_pct']:+.1f}",
            "gap71 paper": f"{pg[1] - pv[1]:+.1f}", "gap90 paper": f"{pg[2] - pv[2]:+.1f}"}
    rates = rate_frame(entry["relu_rates"])
    picked = rates[rates["selected"]].index[0]
    out |= {"relu_rate": f"{picked:g}", "relu_rate_val": f"{rates.loc[picked, 'val MSE']:.3g}",
            "val_0004": f"{rates.loc[0.004, 'val MSE']:.2g}" if 0.004 in rates.index else "not searched",
            "val_ratio_0004": f"{rates.loc[0.004, 'val MSE'] / rates.loc[picked, 'val MSE']:.1f}" if 0.004 in rates.index else "",
            "relu_low_rate": f"{rates.index.min():g}", "relu_high_rate": f"{rates.index.max():g}",
            "relu_low": f"{rates['A ≥ .71 %'].iloc[0]:.1f} % / {rates['A ≥ .90 %'].iloc[0]:.1f} %",
            "relu_high": f"{rates['A ≥ .71 %'].iloc[-1]:.1f} % / {rates['A ≥ .90 %'].iloc[-1]:.1f} %",
            "relu_active_range": f"{rates['active %'].min():.0f}–{rates['active %'].max():.0f} %",
            "relu_active_paper": f"{100 * paper['relu'][0] / 2048:.1f} %"}
    spread = entry.get("importance_spread", {}).get("relu", {})
    if spread:
        out |= {"relu_spread90": f"{spread['0.9']:.0f} %", "relu_spread99": f"{spread['0.99']:.0f} %"}
    out["distance"] = f"{ablation_scores({'readings': {'r': entry}}, paper)['r']['mean_pp']:.1f}"
    return out


def live_numbers(rows: list[dict], paper: dict | None = None) -> dict[str, str]:
    """The numbers page 03's remarks quote about a live table (:func:`table_rows`), for ``glue``:
    per branch "A ≥ .71 / A ≥ .90 % (seed means) against the paper's", the range of the active
    share over branches, and the largest half seed-range of the cosine columns (ReLU apart)."""
    paper = PAPER_FIGURE1 if paper is None else paper
    means = _branch_means(rows)
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


def figure1_rows(profile: str) -> list[dict[str, Any]]:
    """Figure 1's table at ``profile``, one row per (activation branch, seed), beside the paper's
    cosine columns (``paper_*``, in percent as printed; its D columns are not legible)."""
    from ...data import figure1_model
    from ...profiles import get_profile
    from ...specialization import PAPER_FIGURE1, specialization_table

    P = get_profile(profile)
    sizes, model = P.specialization, figure1_model()
    data = figure1_data(sizes)
    rows = []
    for act in ("relu", "gelu", "reglu", "swiglu"):
        run = train_figure1(sizes, act, data=data)
        for seed, net, err, lr in zip(run.seeds, run.models, run.test_mse, run.lrs):
            for r in specialization_table(net, model.directions):
                paper = PAPER_FIGURE1.get(r.branch, (None, None, None))
                rows.append({"figure": "fig1", "profile": P.name, "branch": r.branch, "seed": seed, "width": r.width,
                             "n_active": r.n_active, "frac_A071": r.frac_A071, "frac_A090": r.frac_A090,
                             "frac_D1": r.frac_D1, "frac_D2": r.frac_D2, "test_mse": float(err), "lr": lr,
                             "paper_n_active": paper[0], "paper_pct_A071": paper[1], "paper_pct_A090": paper[2]})
    return rows
