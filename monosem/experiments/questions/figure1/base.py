"""What every Figure 1 question shares (Section 3.1, Appendix A.1): the one configuration class
(:class:`Reading`: a reading of the choices Appendix A.1 leaves open and the sizes it trains at),
the named readings, the one training path (:func:`train_figure1`) and the table it yields.

Appendix A.1 trains width-2 048 ReLU, GELU, ReGLU and SwiGLU networks on ``figure1_model()``
under a "balanced feature-learning initialization" and "Adam under the corresponding width-aware
parameterization", and says no more. A :class:`Reading` fixes every choice left open (the hidden
initialization scale, the readout's initial value and relative rate, the gated value rows'
initial scale, the cosine horizon) and the sizes and protocol of its training (width, batch,
data, updates, the learning rates tried, the seeds and how the data follows them). Every
activation is one batched run (:func:`monosem.train.train`): the stack holds every (learning
rate, seed) pair, and validation MSE alone picks each seed's rate, as in Appendix A.1.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple, Sequence

import pandas as pd
import torch

from ....checks import check_choice, check_int, check_positive
from ....data import figure1_model
from ....device import get_device
from ....models import ACTIVATIONS, GATED, INITS, MLP, MLPStack, mup_readout_lr_scale
from ....profiles import SpecializationSizes
from ....specialization import PAPER_FIGURE1_WIDTH, plot_neuron_weights, specialization_table
from ....train import LR_A1, LR_A1_RELU_GRID, STEP_REVISION, STEP_REVISIONS, TrainConfig, TrainData, a1_config, mse, train

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["FIGURE1_SAMPLE_SEEDS", "READOUT_INITS", "GATED_RATE_FACTORS", "Reading", "READINGS", "FIGURE1_READING", "STUDY_READINGS",
           "KNOWN_READINGS", "Candidate", "Figure1Run", "figure1_data", "train_figure1", "table_rows", "table_row", "branch_means",
           "minus_paper", "BRANCH_NAMES", "neuron_panels", "show"]

#: Our seeds for ``figure1_model().sample`` (the paper does not give its own): a reading that
#: draws its data per network seed (:attr:`Reading.data_per_seed`) adds ten times the seed.
FIGURE1_SAMPLE_SEEDS = {"train": 1, "val": 2, "test": 3}

#: the readout's initial value by the sensitivity study's name: zero (``monosem.models``'
#: default), balanced |a_j| = ||(w_j, b_j)||, or PyTorch's nn.Linear default U(+-1/sqrt(width))
READOUT_INITS = {"zero": "pytorch", "balanced": "balanced", "standard": "standard"}

#: the gated networks' and GELU's rates tried around the paper's stated one by the sensitivity
#: study (its fingerprint: is the stated rate the best of the three?)
GATED_RATE_FACTORS = (0.25, 1.0, 4.0)


@dataclass(frozen=True)
class Reading:
    """One reading of the choices Appendix A.1 leaves open, and the sizes it trains at.

    The reading: ``init`` (an initialization of :mod:`monosem.models`: ``"pytorch"`` is the zero
    readout, ``"balanced"`` |a_j| = ||(w_j, b_j)||, ``"standard"`` PyTorch's readout), the hidden
    initialization times ``hidden_scale``, the readout's rate over the hidden layer's
    (``readout_lr``; ``None``: 1, or muP's ``mup_base_width / width`` when ``mup_base_width`` is
    given), the gated value rows' initial scale relative to the gate rows (``value_scale``), and
    the output multiplier ``output_scale`` (alpha != 1: every rate divided by alpha, the lazy
    regime of Chizat et al.). The defaults are the book's Figure 1 reading (balanced, x0.1).

    The training (the defaults are Appendix A.1's): ``width``, ``batch``, ``n_train`` /
    ``n_val`` / ``n_test`` points, ``max_steps_relu`` / ``max_steps_other`` updates, an
    evaluation every ``eval_every`` (the book's), the cosine decaying to a tenth over
    ``horizon`` times the run (1: over the run, as A.1), the ReLU rates validation chooses from
    (``relu_lr_grid``), the other networks' rates as ``gated_rate_factors`` times the paper's
    stated one, the networks' ``seeds``, the data drawn once (``data_per_seed`` false:
    :data:`FIGURE1_SAMPLE_SEEDS`) or per network seed, and the training step's revision.
    ``neurons``: a cell of the reading also keeps the drawn neurons, the ReLU rate search and the
    importance spread. ``name`` and ``source`` say which reading it is and where it comes from.

    A cell of the result store holds a reading as its spec; :meth:`spec_config` spells its key.
    """

    name: str = "balanced"
    init: str = "balanced"
    hidden_scale: float = 0.1
    readout_lr: float | None = None
    mup_base_width: int | None = None
    value_scale: float = 1.0
    output_scale: float = 1.0
    width: int = 2_048
    batch: int = 2_048
    n_train: int = 100_000
    n_val: int = 4_096
    n_test: int = 2_048
    max_steps_relu: int = 40_000
    max_steps_other: int = 20_000
    eval_every: int = 500
    horizon: float = 1.0
    relu_lr_grid: tuple[float, ...] = LR_A1_RELU_GRID
    gated_rate_factors: tuple[float, ...] = (1.0,)
    seeds: tuple[int, ...] = (0,)
    data_per_seed: bool = False
    step_revision: int = STEP_REVISION
    neurons: bool = False
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        check_choice(self.init, "init", INITS)
        for name in ("hidden_scale", "value_scale", "output_scale"):
            object.__setattr__(self, name, check_positive(getattr(self, name), name))
        if self.readout_lr is not None:
            object.__setattr__(self, "readout_lr", check_positive(self.readout_lr, "readout_lr"))
        if self.mup_base_width is not None:
            object.__setattr__(self, "mup_base_width", check_int(self.mup_base_width, "mup_base_width"))
        for name in ("width", "batch", "n_train", "n_val", "n_test", "max_steps_relu", "max_steps_other", "eval_every"):
            object.__setattr__(self, name, check_int(getattr(self, name), name))
        if isinstance(self.horizon, bool) or not self.horizon >= 1:
            raise ValueError(f"horizon must be >= 1 (the cosine's length over the run's), got {self.horizon!r}")
        object.__setattr__(self, "horizon", float(self.horizon))
        for name in ("relu_lr_grid", "gated_rate_factors"):
            values = tuple(check_positive(v, name) for v in getattr(self, name))
            if not values:
                raise ValueError(f"{name} must hold at least one rate")
            object.__setattr__(self, name, values)
        seeds = tuple(check_int(s, "seeds", 0) for s in self.seeds)
        if not seeds:
            raise ValueError("seeds must hold at least one seed")
        object.__setattr__(self, "seeds", seeds)
        check_choice(self.step_revision, "step_revision", STEP_REVISIONS)
        for name in ("data_per_seed", "neurons"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")

    # --- the training it describes ---------------------------------------------------------

    def at(self, sizes: SpecializationSizes, **changes: Any) -> Reading:
        """This reading at a profile's Figure 1 ``sizes`` (and ``changes``)."""
        at = {"width": sizes.width, "batch": sizes.batch, "n_train": sizes.n_train, "n_val": sizes.n_val, "n_test": sizes.n_test,
              "max_steps_relu": sizes.max_steps_relu, "max_steps_other": sizes.max_steps_other, "eval_every": sizes.eval_every,
              "relu_lr_grid": tuple(sizes.relu_lr_grid), "seeds": tuple(sizes.seeds)}
        return replace(self, **(at | changes))

    def readout_lr_scale(self, width: int | None = None) -> float:
        """The readout's learning rate over the hidden layer's at ``width`` (default: its own)."""
        if self.readout_lr is not None:
            return self.readout_lr
        width = self.width if width is None else width
        return 1.0 if self.mup_base_width is None else mup_readout_lr_scale(width, self.mup_base_width)

    def steps(self, activation: str) -> int:
        """Updates of ``activation``'s networks."""
        return self.max_steps_relu if activation == "relu" else self.max_steps_other

    def rates(self, activation: str) -> tuple[float, ...]:
        """The initial rates ``activation``'s networks are trained at (before the output scale):
        the ReLU grid, else the paper's stated rate times each of :attr:`gated_rate_factors`."""
        return self.relu_lr_grid if activation == "relu" else tuple(LR_A1[activation] * f for f in self.gated_rate_factors)

    def train_config(self, activation: str) -> TrainConfig:
        """Appendix A.1's :class:`~monosem.train.TrainConfig` for ``activation`` under this reading."""
        cfg = a1_config(activation, max_steps=self.steps(activation), batch=self.batch, eval_every=self.eval_every,
                        step_revision=self.step_revision)
        return cfg if self.horizon == 1 else replace(cfg, schedule_steps=int(round(self.horizon * cfg.max_steps)))

    def sample_seeds(self, seed: int = 0) -> dict[str, int]:
        """The seeds of the training, validation and test draws for network seed ``seed``."""
        shift = 10 * seed if self.data_per_seed else 0
        return {part: shift + s for part, s in FIGURE1_SAMPLE_SEEDS.items()}

    # --- its key in the result store -------------------------------------------------------

    def spec_config(self) -> dict[str, Any]:
        """What a cell's key holds of this reading (:func:`monosem.experiments.specs.spec_config`).

        A reading whose data follows the network seed is a cell of the sensitivity study (one
        seed per cell, its data's ``run``): kind ``"Setting"`` and :meth:`setting_fields`. Any
        other is a cell of the Figure 1 table (every seed, one draw of the data, whose sizes the
        cell's data holds): kind ``"ReadingSpec"``, the reading by name and every field its
        training reads. These are the kinds and fields under which every computed and recorded
        cell of the two methods is stored, so the one class keys each cell as its record is
        keyed: a cell is found, resumed from its checkpoints (``checkpoints/<key>``) and recorded
        under one key, with no second spelling to try. A
        field those kinds cannot hold must be at its default, or this raises ``ValueError``
        naming it.
        """
        if self.data_per_seed:
            return {"kind": "Setting"} | self.setting_fields()
        fixed = {"horizon": 1.0, "gated_rate_factors": (1.0,), "output_scale": 1.0}
        self._require(fixed, "a cell of the Figure 1 table")
        return {"kind": "ReadingSpec", "reading": self.name, "init": self.init, "hidden_scale": self.hidden_scale,
                "mup_base_width": self.mup_base_width, "readout_lr": self.readout_lr, "value_scale": self.value_scale,
                "width": self.width, "batch": self.batch, "max_steps_relu": self.max_steps_relu,
                "max_steps_other": self.max_steps_other, "eval_every": self.eval_every, "relu_lr_grid": list(self.relu_lr_grid),
                "seeds": list(self.seeds), "step_revision": self.step_revision, "neurons": self.neurons}

    def setting_fields(self) -> dict[str, Any]:
        """The sensitivity study's fields of this reading (its cells' key, the study's
        ``settings``): the hidden scale, the readout's initial value by
        :data:`READOUT_INITS`' name and its relative rate, the value rows' scale, the updates of
        every network, the cosine horizon and the sizes. The study's protocol is fixed: the
        paper's six ReLU rates, :data:`GATED_RATE_FACTORS`, as many updates for every network and
        the current step revision."""
        fixed = {"relu_lr_grid": LR_A1_RELU_GRID, "gated_rate_factors": GATED_RATE_FACTORS, "mup_base_width": None,
                 "output_scale": 1.0, "max_steps_other": self.max_steps_relu, "step_revision": STEP_REVISION, "neurons": False}
        self._require(fixed, "a cell of the sensitivity study")
        readout = next(name for name, init in READOUT_INITS.items() if init == self.init)
        return {"hidden_scale": self.hidden_scale, "readout_init": readout, "readout_lr": self.readout_lr_scale(),
                "value_scale": self.value_scale, "steps": self.max_steps_relu, "horizon": self.horizon, "width": self.width,
                "batch": self.batch, "n_train": self.n_train, "n_val": self.n_val, "n_test": self.n_test, "eval_every": self.eval_every}

    def _require(self, fixed: dict[str, Any], what: str) -> None:
        for name, value in fixed.items():
            if getattr(self, name) != value:
                raise ValueError(f"{what} has {name}={value!r}; reading {self.name!r} has {name}={getattr(self, name)!r}")


#: The readings the readings ablation compares. Mean-field is not separate: for two-layer networks
#: under Adam it describes the same limit as muP (:func:`monosem.models.mup_readout_lr_scale`).
READINGS = (
    Reading("zero readout", init="pytorch", hidden_scale=1.0,
            source="PyTorch's nn.Linear hidden init, zero readout (Lemma 9's zero output layer); monosem.models' default"),
    Reading("small init", init="pytorch", hidden_scale=0.1, source="the same, hidden init x 0.1 (deeper in the feature-learning regime)"),
    Reading("balanced", source="|a_j| = ||(w_j, b_j)|| at init, hidden init x 0.1 (Section 4.1's conserved ||w_j||^2 - a_j^2 starts at 0)"),
    Reading("muP", init="pytorch", hidden_scale=1.0, mup_base_width=2048,
            source="maximal update under Adam: readout rate x 2048 / width, tuned at the paper's width 2 048 (Yang et al., Tensor Programs IV/V)"),
)

#: The reading Figure 1's networks use: **balanced**, chosen by the recorded readings ablation
#: (the cells of ``monosem/recorded/cells_cpu/figure1-reading/`` at widths 512 and 2048; page 03 prints its scores,
#: :func:`.readings.ablation_verdict`), which scores each reading by its distance to the paper's
#: whole table (six rows x active share, % A >= .71, % A >= .90). The "zero readout" reading
#: (``monosem.models``' default initialization) is ``READINGS[0]`` (the ablations of page 03
#: start from it). What each unstated choice does to the table is mapped by :mod:`.study`.
FIGURE1_READING = READINGS[2]

#: The readings the sensitivity study (:mod:`.study`) ranks best at width 512, for the paper
#: profile: the most cosine cells within 10 points of the paper's table, and the smallest mean
#: distance to it. ``python -m monosem readings --profile paper --readings NAME`` trains one.
STUDY_READINGS = (
    Reading("readout rate x0.28", readout_lr=round(math.sqrt(40 / 512), 4),
            source="balanced x0.1 with the readout's rate x sqrt(d / m) at m = 512 (the NTK ratio under Adam), fixed across widths"),
    Reading("value x0.3", value_scale=0.3, source="balanced x0.1 with the gated value rows x 0.3 at initialization"),
)

#: every named reading of the table, by name
KNOWN_READINGS = {r.name: r for r in READINGS + STUDY_READINGS}


class Candidate(NamedTuple):
    """One trained network of a run's grid, validation-selected or not."""

    lr: float
    seed: int
    model: MLP
    val_mse: float
    test_mse: float
    best_step: int


@dataclass
class Figure1Run:
    """One activation's trained networks under a reading, one per seed (validation-selected)."""

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
    #: every trained network of the grid, validation-selected or not (the ReLU rate search keeps
    #: all of its candidates here)
    candidates: list[Candidate] = field(default_factory=list)


def figure1_data(reading: Reading, seed: int = 0, *, device: str | torch.device | None = None):
    """``(TrainData, (x_test, y_test))`` from ``figure1_model()`` at ``reading``'s sizes, drawn
    with :meth:`Reading.sample_seeds` of network seed ``seed``."""
    m = figure1_model()
    dev = get_device(device)
    seeds = reading.sample_seeds(seed)
    x, y, _ = m.sample(reading.n_train, seeds["train"], device=dev)
    xv, yv, _ = m.sample(reading.n_val, seeds["val"], device=dev)
    xt, yt, _ = m.sample(reading.n_test, seeds["test"], device=dev)
    return TrainData(x, y, xv, yv), (xt, yt)


def _checkpoint(reading: Reading, activation: str, checkpoint_dir: str | os.PathLike) -> Path:
    """Where ``activation``'s run under ``reading`` keeps its checkpoint (a tag per choice away
    from the zero-readout reading at revision 1)."""
    Path(checkpoint_dir).mkdir(parents=True, exist_ok=True)
    rate = reading.readout_lr_scale()
    tag = "" if (reading.init, rate) == ("pytorch", 1.0) else f"_{reading.init}_r{rate:g}"
    tag += "" if reading.step_revision == 1 else f"_s{reading.step_revision}"
    tag += "" if reading.value_scale == 1.0 else f"_v{reading.value_scale:g}"
    tag += "" if reading.horizon == 1.0 else f"_hz{reading.horizon:g}"
    tag += "" if reading.gated_rate_factors == (1.0,) else "_g" + "-".join(f"{f:g}" for f in reading.gated_rate_factors)
    tag += "_d" if reading.data_per_seed else ""
    return Path(checkpoint_dir) / f"figure1_{activation}_w{reading.width}_a{reading.output_scale:g}_h{reading.hidden_scale:g}{tag}.pt"


def train_figure1(
    reading: Reading,
    activation: str,
    *,
    seeds: Sequence[int] | None = None,
    data=None,
    device: str | torch.device | None = None,
    checkpoint_dir: str | os.PathLike | None = None,
    progress: bool = True,
) -> Figure1Run:
    """Train ``activation``'s Figure 1 networks (Appendix A.1) under ``reading``: one stack of
    every (rate, seed) pair of :meth:`Reading.rates` and ``seeds`` (default the reading's), each
    trained for :meth:`Reading.steps` updates at its rate divided by the output scale, the
    checkpoint of each selected by validation MSE, then per seed the rate with the smallest
    validation MSE. ``data``: :func:`figure1_data` (default: drawn for the first seed).
    Resumes from (and keeps) a checkpoint in ``checkpoint_dir`` when given."""
    if activation not in ACTIVATIONS:
        check_choice(activation, "activation", ACTIVATIONS)
    seeds = tuple(reading.seeds if seeds is None else seeds)
    dev = get_device(device)
    if data is None:
        data = figure1_data(reading, seeds[0], device=dev)
    train_data, (xt, yt) = data
    grid = reading.rates(activation)
    pairs = [(lr, s) for lr in grid for s in seeds]
    stack = MLPStack(train_data.x_train.shape[-1], reading.width, activation, [s for _, s in pairs], output_scale=reading.output_scale,
                     hidden_scale=reading.hidden_scale, init=reading.init, readout_lr_scale=reading.readout_lr_scale(), device=dev)
    if activation in GATED and reading.value_scale != 1.0:
        with torch.no_grad():  # the value rows (and their biases) only; "balanced" keeps |a_j| as drawn
            stack.W[:, reading.width:] *= reading.value_scale
            stack.b[:, reading.width:] *= reading.value_scale
    cfg = reading.train_config(activation)
    ckpt = None if checkpoint_dir is None else _checkpoint(reading, activation, checkpoint_dir)
    res = train(stack, train_data, cfg, lrs=[lr / reading.output_scale for lr, _ in pairs], checkpoint=ckpt, progress=progress,
                desc=activation)
    models = res.models()
    val = res.best_value.tolist()
    test = mse(res.stack, xt, yt).tolist()
    steps = [int(s) for s in res.best_step]
    chosen = [min((i for i, (_, si) in enumerate(pairs) if si == s), key=lambda i: (val[i], i)) for s in seeds]
    return Figure1Run(
        activation=activation,
        seeds=seeds,
        models=[models[i] for i in chosen],
        lrs=tuple(pairs[i][0] for i in chosen),
        best_step=tuple(steps[i] for i in chosen),
        val_mse=tuple(val[i] for i in chosen),
        test_mse=tuple(test[i] for i in chosen),
        steps=cfg.max_steps,
        steps_per_second=res.steps_per_second,
        seconds=res.seconds,
        n_stacked=len(pairs),
        output_scale=reading.output_scale,
        hidden_scale=reading.hidden_scale,
        reading=reading.name,
        earlier_seconds=res.earlier_seconds,
        candidates=[Candidate(lr, s, models[i], val[i], test[i], steps[i]) for i, (lr, s) in enumerate(pairs)],
        grid_val_mse={lr: tuple(val[i] for i, (l2, _) in enumerate(pairs) if l2 == lr) for lr in grid},
    )


# --- the Figure 1 table ------------------------------------------------------------------------


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
    points: active share of the paper's width, % with A >= .71, % with A >= .90."""
    n_act, a71, a90 = paper_row
    return m["active_pct"] - 100 * n_act / PAPER_FIGURE1_WIDTH, m["A071_pct"] - a71, m["A090_pct"] - a90


#: the branches' names as the tables print them
BRANCH_NAMES = {"relu": "ReLU", "gelu": "GELU", "reglu gate": "ReGLU gate", "reglu value": "ReGLU value",
                "swiglu gate": "SwiGLU gate", "swiglu value": "SwiGLU value"}


def neuron_panels(W: torch.Tensor, titles: list[str], suptitle: str, *, xlabel: str | None = None, **grid) -> Figure:
    """A figure of one panel of coordinate-wise |w| per row of ``W`` (the Figure 1 model's
    coordinates; :func:`monosem.specialization.plot_neuron_weights`), in the book's style."""
    from .... import plots

    with plots.paper_style():
        fig, axes = plots.panel_grid(len(W), **grid)
        plot_neuron_weights(axes, W, figure1_model().K, titles=titles)
        for ax in axes if xlabel else ():
            ax.set_xlabel(xlabel)
        fig.suptitle(suptitle)
    return fig


def show(parts: Iterable[str | pd.DataFrame]) -> None:
    """A cell's output from ``parts`` in order: each text printed, each table displayed."""
    from IPython.display import display  # a notebook's display; not needed by the rest of the package

    for part in parts:
        if isinstance(part, pd.DataFrame):
            display(part)
        else:
            print(part)
