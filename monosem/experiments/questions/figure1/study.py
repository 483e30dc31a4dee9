"""What controls Figure 1's active share and alignment: a sensitivity study (Section 3.1, A.1).

The paper trains its Figure 1 networks under a "balanced feature-learning initialization" and
"Adam under the corresponding width-aware parameterization", and says no more. Each setting of
:data:`SETTINGS` is a :class:`~.base.Reading` that fixes one reading of every choice left open
(hidden initialization scale, the readout's initial value, the readout's learning rate relative
to the hidden layer's, the gated value branch's initial scale, the cosine horizon, the training
length) at width 512, with the study's protocol: the paper's six ReLU rates, the other networks at
:data:`~.base.GATED_RATE_FACTORS` times their stated rates, and data drawn per network seed, so
that two seeds are two independent replicates. :func:`measure` trains the four networks of one
seed under it (:func:`~.base.train_figure1`, the one training path) and records, per network,
everything the table and the paper's own fingerprints need:

* the Figure 1 columns of every branch (active share, A >= .71, A >= .90, D > 1, D > 2);
* the importance spread (share of the width carrying 90 % of the importance);
* the share of **dead** neurons: (gate) pre-activation <= 0 on every training example, over the
  width and over the active set (a dead neuron keeps the importance it had when it died);
* validation and test MSE and the validation-selected checkpoint step;
* the fingerprints: the ReLU rate validation picks among the paper's six (the paper: 0.004, best
  checkpoint at 37 000 of 40 000 updates) and, for the gated networks, whether the paper's stated
  rate is the best of {rate / 4, rate, rate x 4} on validation.

Parameterizations are expressed through Adam's invariance: Adam's update does not depend on a
parameter's gradient scale (up to ``eps``), so a layer multiplier ``c`` with rate ``eta`` is the
same run as no multiplier, the parameter's initial value times ``c`` and the rate times ``c``.
Standard, NTK, mean-field and muP therefore differ here only in the readout's initial value and its
rate relative to the hidden layer's (``readout_lr``); the overall rate is the paper's.

Every (setting, seed) is a cell of the result store (:mod:`monosem.experiments.cache`): data
:class:`StudyData` (Figure 1's K, the setting's training size, the seed), method :data:`METHOD`
with the setting as its spec, computed by :func:`measure`; the figure ``figure1-study``
(:func:`study_jobs`, the same cells at every profile) is run, recorded (at profile
:data:`RECORDED_PROFILE`) and exported like every other figure, and an interrupted study resumes
where it stopped. :func:`run_study` and :func:`recorded_study` give the study as one dictionary
(``{"settings": {label: setting fields}, "cells": [{"label", "seed", "seconds", "rows"}]}``),
and the rest of the module is what page 03 reads from it: its tables, its map (``monosem plot
figure1-study``), each factor's effect, the ranking against the paper's table and the sentences
about the two hypotheses.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, replace
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
import torch

from ....checks import check_choice
from ....data import figure1_model
from ....models import MLP
from ....profiles import get_profile
from ....specialization import PAPER_FIGURE1, PAPER_FIGURE1_WIDTH, active_set, importance, specialization_table
from ....tables import count, span, thousands
from ....train import A1_RELU_BEST_STEP, LR_A1
from ...cache import Job, ResultCache
from ...recorded import load_recorded_cells
from ...registry import register_method, register_plot, register_rows
from ...runner import run_jobs
from ...sweeps import Figure, register_figure
from .base import GATED_RATE_FACTORS, READOUT_INITS, Reading, figure1_data, train_figure1
from .table import REPRODUCE_PP

__all__ = ["STUDY_BASE", "SETTINGS", "STUDY_SEEDS", "setting", "StudyData", "METHOD", "RECORDED_PROFILE", "RECORDED_NAME", "measure",
           "study_job", "study_jobs", "compute_study_cell", "run_study", "study_of_records", "recorded_study", "study_rows", "dead_share",
           "study_frame", "selected_frame", "fingerprints", "paper_distance", "FACTORS", "BRANCHES", "setting_means", "factor_effects",
           "plot_map", "ranking", "dead_neurons", "gate_value_split", "study_numbers", "WITHIN_PP", "WITHIN", "REACH_CELLS",
           "MOVE_PP", "paper_best_step_share"]

STUDY_SEEDS = (0, 1)
#: the cells' method and figure
METHOD = "figure1-study"
#: the profile the study's cells are recorded at (``monosem study figure1 --record``); the
#: study's sizes are its settings', the same at every profile
RECORDED_PROFILE = "cpu"
#: the named file the study was recorded in before its cells (found through
#: :data:`monosem.experiments.legacy.NAMED_RECORDS`)
RECORDED_NAME = "figure1_sensitivity_w512"
#: a cosine cell (a branch's % A >= .71 or % A >= .90) counts as the paper's within this many
#: points: Figure 1's tolerance
WITHIN_PP = REPRODUCE_PP
#: the ranking's column of how many cosine cells lie within :data:`WITHIN_PP`
WITHIN = f"cosine cells within {WITHIN_PP:g}"
#: the cosine cells a setting must bring within :data:`WITHIN_PP` to reach the paper's table
REACH_CELLS = 10
#: a hypothesis moves a gap toward the paper only by more than this many points
MOVE_PP = 5.0

#: The study's base: the book's Figure 1 reading (:data:`~.base.FIGURE1_READING`) at width 512,
#: batch 256, 6 000 updates of every network, an evaluation every 250, under the study's protocol.
STUDY_BASE = Reading("base (balanced, x0.1)", readout_lr=1.0, width=512, batch=256, max_steps_relu=6_000, max_steps_other=6_000,
                     eval_every=250, gated_rate_factors=GATED_RATE_FACTORS, data_per_seed=True)


def _setting(label: str, *, readout: str | None = None, steps: int | None = None, **changes: Any) -> Reading:
    """:data:`STUDY_BASE` named ``label`` with the readout's initial value ``readout`` (a name of
    :data:`~.base.READOUT_INITS`), ``steps`` updates of every network and ``changes``."""
    if readout is not None:
        changes["init"] = READOUT_INITS[check_choice(readout, "readout_init", tuple(READOUT_INITS))]
    if steps is not None:
        changes |= {"max_steps_relu": steps, "max_steps_other": steps}
    return replace(STUDY_BASE, name=label, **changes)


def setting(fields: dict[str, Any], name: str = "") -> Reading:
    """The study reading of a study's ``settings`` entry (:meth:`~.base.Reading.setting_fields`),
    named ``name``."""
    fields = dict(fields)
    return _setting(name or STUDY_BASE.name, readout=fields.pop("readout_init"), steps=fields.pop("steps"), **fields)


_m, _d = STUDY_BASE.width, 40
#: The study's settings by label: the base (the book's Figure 1 reading at width 512) and one
#: factor at a time around it, plus the probe's all-small reading and the standard / NTK / muP
#: parameterizations at full scale.
SETTINGS: dict[str, Reading] = {s.name: s for s in (
    STUDY_BASE,
    # initialization scale (balanced readout)
    _setting("balanced x1", hidden_scale=1.0),
    _setting("balanced x0.3", hidden_scale=0.3),
    _setting("balanced x0.03", hidden_scale=0.03),
    _setting("balanced x0.01", hidden_scale=0.01),
    # the readout's initial value
    _setting("zero readout x0.1", readout="zero"),
    _setting("standard readout x0.1", readout="standard"),
    _setting("zero readout x1", readout="zero", hidden_scale=1.0),
    _setting("zero readout x0.01", readout="zero", hidden_scale=0.01),
    _setting("standard x0.01", readout="standard", hidden_scale=0.01),
    _setting("standard x0.03", readout="standard", hidden_scale=0.03),
    # parameterizations (Adam: the readout's initial value and relative rate)
    _setting("standard (PyTorch)", readout="standard", hidden_scale=1.0),
    _setting("NTK", readout="standard", hidden_scale=1.0, readout_lr=round(math.sqrt(_d / _m), 4)),
    _setting("muP / mean-field (base 2 048)", readout="zero", hidden_scale=1.0, readout_lr=2048 / _m),
    _setting("readout rate x0.1", readout_lr=0.1),
    _setting("readout rate x0.28", readout_lr=round(math.sqrt(_d / _m), 4)),
    _setting("readout rate x4", readout_lr=4.0),
    # the gated value branch smaller than the gate
    _setting("value x0.3", value_scale=0.3),
    _setting("value x0.1", value_scale=0.1),
    # the cosine horizon and the training length
    _setting("horizon x2", horizon=2.0),
    _setting("horizon x10", horizon=10.0),
    _setting("steps 2 000", steps=2_000),
    _setting("steps 12 000", steps=12_000),
    _setting("NTK x0.1", readout="standard", readout_lr=round(math.sqrt(_d / _m), 4)),
)}


def dead_share(model: MLP, x: torch.Tensor, neurons: torch.Tensor | None = None) -> float:
    """Share of ``neurons`` (default: all) whose (gate) pre-activation is <= 0 on every row of
    ``x``: a ReLU or ReGLU neuron there has zero output and zero gradient on the whole set. For
    GELU and SwiGLU the same test marks neurons that are (almost) off everywhere."""
    W, b = model.W.detach()[: model.width], model.b.detach()[: model.width]
    on = torch.zeros(model.width, dtype=torch.bool, device=W.device)
    for chunk in torch.split(x, 8192):
        on |= (torch.addmm(b, chunk, W.T) > 0).any(0)
    dead = ~on
    if neurons is not None:
        if neurons.numel() == 0:
            return math.nan
        dead = dead[neurons.to(dead.device)]
    return float(dead.double().mean())


def _network_rows(model: MLP, seed: int, lr: float, val: float, test: float, best_step: int, x_train: torch.Tensor) -> list[dict]:
    directions = figure1_model().directions
    imp = importance(model)
    act = active_set(imp, 0.999)
    base = {"activation": model.activation, "seed": seed, "lr": lr, "val_mse": val, "test_mse": test, "best_step": best_step,
            "active_pct": 100 * act.numel() / model.width,
            "spread90_pct": 100 * active_set(imp, 0.9).numel() / model.width,
            "dead_pct": 100 * dead_share(model, x_train),
            "dead_of_active_pct": 100 * dead_share(model, x_train, act)}
    return [base | {"branch": r.branch, "A071_pct": 100 * r.frac_A071, "A090_pct": 100 * r.frac_A090,
                    "D1_pct": 100 * r.frac_D1, "D2_pct": 100 * r.frac_D2} for r in specialization_table(model, directions)]


def measure(s: Reading, seed: int, *, device: str | torch.device | None = None, progress: bool = False) -> dict:
    """Train every network of one seed under ``s`` (:func:`~.base.train_figure1` on the seed's
    own data: ReLU at every rate of its grid, the others at each of its rate factors) and return
    ``{"rows": [...], "seconds"}``: one row per network and branch, selected or not (see the
    module docstring)."""
    dev = torch.device("cpu") if device is None else torch.device(device)
    data = figure1_data(s, seed, device=dev)
    rows, t0 = [], time.perf_counter()
    for activation in ("relu", "gelu", "reglu", "swiglu"):
        run = train_figure1(s, activation, seeds=(seed,), data=data, device=dev, progress=progress)
        for c in run.candidates:
            rows += _network_rows(c.model, seed, c.lr, c.val_mse, c.test_mse, c.best_step, data[0].x_train)
    return {"rows": rows, "seconds": time.perf_counter() - t0}


# --- the study's cells ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StudyData:
    """A study cell's data: Figure 1's model (``K`` clusters, :func:`~monosem.data.figure1_model`),
    ``n`` training points (the setting's ``n_train``) and ``run``, the seed of the networks and of
    the samples (:func:`measure`). Everything else the cell reads is its :class:`Reading`."""

    K: int
    n: int
    run: int


def study_job(s: Reading, seed: int, profile: str = RECORDED_PROFILE) -> Job:
    """The cell of setting ``s`` at seed ``seed`` (``profile`` only names who declared it: it is
    not part of the cell's key)."""
    return Job(METHOD, StudyData(figure1_model().K, s.n_train, int(seed)), s, profile)


def study_jobs(settings: dict[str, Reading] | None = None, seeds: Iterable[int] | None = None,
               profile: str = RECORDED_PROFILE) -> list[Job]:
    """The study's cells: every setting of ``settings`` (default :data:`SETTINGS`, in its order),
    each at every seed of ``seeds`` (default :data:`STUDY_SEEDS`)."""
    settings = SETTINGS if settings is None else settings
    seeds = STUDY_SEEDS if seeds is None else tuple(seeds)
    return [study_job(s, seed, profile) for s in settings.values() for seed in seeds]


def compute_study_cell(job: Job, cache: ResultCache | None = None, *, device: str | torch.device | None = None) -> dict[str, Any]:
    """One cell of the study (Section 3.1, A.1): :func:`measure` of its setting at its seed, on
    ``device`` (default: the CPU, as recorded). Returns ``{"rows", "seconds"}``."""
    s, data = job.spec, job.data
    if (data.K, data.n) != (figure1_model().K, s.n_train):
        raise ValueError(f"{job.label()}: a study cell's data is Figure 1's K = {figure1_model().K} and its setting's n_train = {s.n_train}")
    return measure(s, job.run, device=device, progress=False)


def _figure_jobs(P) -> list[Job]:
    return study_jobs(profile=P.name)


def _study_sizes(P) -> dict[str, Reading]:
    """The study's grid at any profile: its own settings (their sizes are the study's)."""
    return SETTINGS


register_method(METHOD, compute=compute_study_cell)
register_figure(Figure(METHOD, "What moves Figure 1's table: the sensitivity study at width 512 (Section 3.1, A.1)", (METHOD,),
                       _study_sizes, jobs=_figure_jobs))


def _study(settings: dict[str, Reading], cells: list[tuple[str, Job, dict[str, Any]]]) -> dict[str, Any]:
    """``{"settings": {label: setting fields}, "cells": [{"label", "seed", "seconds", "rows"}]}``
    from ``(label, job, record)`` triples (a cell's seconds: :func:`measure`'s training time)."""
    return {"settings": {label: s.setting_fields() for label, s in settings.items()},
            "cells": [{"label": label, "seed": job.run, "seconds": rec["metrics"]["seconds"], "rows": rec["metrics"]["rows"]}
                      for label, job, rec in cells]}


def run_study(settings: dict[str, Reading] | None = None, seeds: Iterable[int] = STUDY_SEEDS, *, cache: ResultCache | None = None,
              device: str | torch.device | None = None, progress: bool = True, compute: bool = True, part: tuple[int, int] = (0, 1)) -> dict:
    """Every (setting, seed) of the study (Section 3.1, A.1) from the result store ``cache``
    (default: ``$MONOSEM_CACHE``, else ``results/cache``), the missing cells computed and stored
    at once (:func:`~monosem.experiments.runner.run_jobs`). Returns ``{"settings": {label:
    setting fields}, "cells": [{"label", "seed", "seconds", "rows"}]}``, the cells in the order
    of ``settings`` (default :data:`SETTINGS`) and ``seeds``; with ``compute=False`` missing cells
    are skipped. ``part=(i, k)`` computes only every k-th cell from the i-th (k workers on
    disjoint cells); the others are read if cached."""
    settings = SETTINGS if settings is None else settings
    cache = ResultCache() if cache is None else cache
    i, k = part
    if not (k >= 1 and 0 <= i < k):
        raise ValueError(f"part=(i, k) needs 0 <= i < k, got {part!r}")
    seeds = tuple(seeds)
    labelled = [(label, study_job(s, seed)) for label, s in settings.items() for seed in seeds]
    jobs = [job for _, job in labelled]
    mine = jobs[i::k] if compute else []
    records = (run_jobs(mine, functools.partial(compute_study_cell, device=device), cache, progress=progress, desc="figure1 study")
               if mine else {})
    done, _ = cache.status([job for job in jobs if job not in records])  # a damaged file is moved aside, with a warning
    records |= {job: cache.load(job) for job in done}
    return _study(settings, [(label, job, records[job]) for label, job in labelled if job in records])


def study_of_records(records: dict[Job, dict[str, Any]]) -> dict[str, Any]:
    """The study's cells ``{job: record}`` (cached or recorded) in :func:`run_study`'s shape, in
    their order, each labelled by its setting's label in :data:`SETTINGS` (a setting outside it
    by its key)."""
    labels = {s: label for label, s in reversed(SETTINGS.items())}  # a setting listed twice: its first label
    cells = [(labels.get(job.spec, f"setting {job.key()}"), job, rec) for job, rec in records.items()]
    return _study({label: job.spec for label, job, _ in cells}, cells)


def recorded_study() -> dict[str, Any] | None:
    """The recorded study (Section 3.1, A.1): the recorded cells of profile
    :data:`RECORDED_PROFILE`, or those recorded in the named file :data:`RECORDED_NAME` before
    they were cells. Returns ``{"recorded": the latest cell's date, "seconds": the cells' wall
    times summed, "machine": the first cell's machine, "results": the study in :func:`run_study`'s
    shape}``, or ``None`` when no cell is recorded."""
    records = load_recorded_cells(study_jobs(), RECORDED_PROFILE)
    if not records:
        return None
    timings = [rec.get("timing", {}) for rec in records.values()]
    return {"recorded": max(str(t.get("finished", "")) for t in timings),
            "seconds": sum(float(t.get("seconds", 0.0)) for t in timings),
            "machine": next(iter(records.values())).get("machine", {}),
            "results": study_of_records(records)}

#: what an exported row of the study holds after its setting and seed: the network, the branch and
#: every measured column (:func:`measure`)
_ROW_COLUMNS = ("activation", "lr", "branch", "active_pct", "A071_pct", "A090_pct", "D1_pct", "D2_pct", "spread90_pct", "dead_pct",
                "dead_of_active_pct", "val_mse", "test_mse", "best_step")


def study_rows(records: dict[Job, dict[str, Any]]) -> list[dict[str, Any]]:
    """The study's cells ``{job: record}`` as export rows (``monosem export figure1-study``): one
    per setting label, seed, network (activation and rate) and branch, with the measured columns
    and the cell's key."""
    study = study_of_records(records)
    rows = []
    for cell, job in zip(study["cells"], records, strict=True):
        rows += [{"setting": cell["label"], "seed": cell["seed"], **{c: r.get(c) for c in _ROW_COLUMNS}, "key": job.key()}
                 for r in cell["rows"]]
    return rows


register_rows(METHOD, study_rows)

# --- reading the study ------------------------------------------------------------------------


def study_frame(result: dict) -> pd.DataFrame:
    """Every network and branch of the study as one long table (one row per setting label, seed,
    activation, rate and branch)."""
    rows = [{"setting": c["label"], **r} for c in result["cells"] for r in c["rows"]]
    return pd.DataFrame(rows)


def selected_frame(result: dict) -> pd.DataFrame:
    """The networks the Figure 1 table would show: ReLU at its validation-selected rate (per seed),
    the others at the paper's stated rate."""
    df = study_frame(result)
    if df.empty:
        return df
    stated = df["activation"].map(LR_A1)
    gated = (df["activation"] != "relu") & np.isclose(df["lr"], stated)
    relu = df[df["activation"] == "relu"]
    best = relu.loc[relu.groupby(["setting", "seed"])["val_mse"].idxmin(), ["setting", "seed", "lr"]]
    relu_sel = relu.merge(best, on=["setting", "seed", "lr"])
    return pd.concat([relu_sel, df[gated]], ignore_index=True)


def fingerprints(result: dict) -> pd.DataFrame:
    """Per setting and seed, the paper's own fingerprints: the ReLU rate validation picks and its
    checkpoint step as a share of the run (the paper: 0.004 at 37 000 / 40 000 = 0.925), and for
    each gated network and GELU the validation MSE at the stated rate over the best of the three
    rates tried (1: the stated rate is the best)."""
    df = study_frame(result)
    out = []
    for (label, seed), g in df.drop_duplicates(["setting", "seed", "activation", "lr"]).groupby(["setting", "seed"], sort=False):
        relu = g[g["activation"] == "relu"]
        pick = relu.loc[relu["val_mse"].idxmin()]
        steps = result["settings"][label]["steps"]
        row = {"setting": label, "seed": seed, "relu_rate": float(pick["lr"]), "relu_best_step_share": float(pick["best_step"]) / steps}
        for act in ("gelu", "reglu", "swiglu"):
            a = g[g["activation"] == act]
            stated = a[np.isclose(a["lr"], LR_A1[act])]["val_mse"].iloc[0]
            row[f"{act}_stated_over_best"] = float(stated / a["val_mse"].min())
        out.append(row)
    return pd.DataFrame(out)


def paper_distance(selected: pd.DataFrame, paper: dict | None = None) -> pd.DataFrame:
    """Per setting: the mean over seeds of every branch's (active %, A >= .71 %, A >= .90 %), its
    mean absolute distance to the paper's table (six rows x three columns, in points) and how many
    of the twelve cosine cells lie within 10 points of the paper's."""
    paper = PAPER_FIGURE1 if paper is None else paper
    means = selected.groupby(["setting", "branch"], sort=False)[["active_pct", "A071_pct", "A090_pct", "dead_pct", "dead_of_active_pct",
                                                                  "spread90_pct", "test_mse"]].mean()
    out = []
    for label in selected["setting"].unique():
        row, gaps, within = {"setting": label}, [], 0
        for branch, (n_act, a71, a90) in paper.items():
            if (label, branch) not in means.index:
                continue
            m = means.loc[(label, branch)]
            mine = (float(m["active_pct"]), float(m["A071_pct"]), float(m["A090_pct"]))
            theirs = (100 * n_act / PAPER_FIGURE1_WIDTH, a71, a90)
            gaps += [abs(a - b) for a, b in zip(mine, theirs)]
            within += sum(abs(a - b) <= WITHIN_PP for a, b in zip(mine[1:], theirs[1:]))
            row[f"{branch} active %"], row[f"{branch} A>=.71 %"], row[f"{branch} A>=.90 %"] = mine
        row["distance (points)"] = float(np.mean(gaps)) if gaps else math.nan
        row[WITHIN] = within
        out.append(row)
    return pd.DataFrame(out).set_index("setting")


# --- which factor moves which column ------------------------------------------------------------

#: The study's factors: each a list of settings that differ from one another in that factor only.
FACTORS: dict[str, tuple[str, ...]] = {
    "hidden init scale (balanced readout)": ("balanced x1", "balanced x0.3", "base (balanced, x0.1)", "balanced x0.03", "balanced x0.01"),
    "readout init (hidden x1)": ("balanced x1", "zero readout x1", "standard (PyTorch)"),
    "readout init (hidden x0.1)": ("base (balanced, x0.1)", "zero readout x0.1", "standard readout x0.1"),
    "readout init (hidden x0.03)": ("balanced x0.03", "standard x0.03"),
    "readout init (hidden x0.01)": ("balanced x0.01", "zero readout x0.01", "standard x0.01"),
    "parameterization (hidden x1)": ("standard (PyTorch)", "NTK", "muP / mean-field (base 2 048)"),
    "parameterization (hidden x0.1)": ("standard readout x0.1", "NTK x0.1"),
    "readout rate (balanced x0.1)": ("readout rate x0.1", "readout rate x0.28", "base (balanced, x0.1)", "readout rate x4"),
    "value branch scale": ("base (balanced, x0.1)", "value x0.3", "value x0.1"),
    "cosine horizon": ("base (balanced, x0.1)", "horizon x2", "horizon x10"),
    "training length": ("steps 2 000", "base (balanced, x0.1)", "steps 12 000"),
}

BRANCHES = tuple(PAPER_FIGURE1)


def setting_means(selected: pd.DataFrame) -> pd.DataFrame:
    """Seed means of every measure, indexed by (setting, branch)."""
    cols = ["active_pct", "A071_pct", "A090_pct", "D1_pct", "D2_pct", "dead_pct", "dead_of_active_pct", "spread90_pct", "val_mse", "test_mse"]
    return selected.groupby(["setting", "branch"], sort=False)[cols].mean()


def factor_effects(selected: pd.DataFrame, columns: Sequence[str] = ("active_pct", "A071_pct")) -> pd.DataFrame:
    """How far each factor moves each column: per factor and branch, the largest minus the smallest
    seed mean over the factor's settings (percentage points), for ``columns``."""
    means = setting_means(selected)
    out = {}
    for factor, labels in FACTORS.items():
        have = [lab for lab in labels if lab in means.index.get_level_values(0)]
        if len(have) < 2:
            continue
        row = {}
        for branch in BRANCHES:
            vals = means.loc[[(lab, branch) for lab in have]]
            for col in columns:
                row[(branch, col)] = float(vals[col].max() - vals[col].min())
        out[factor] = row
    df = pd.DataFrame(out).T
    df.columns = pd.MultiIndex.from_tuples(df.columns, names=["branch", "measure"])
    return df


def plot_map(selected: pd.DataFrame, paper: dict | None = None):
    """The map: one panel per branch, active share (x) against % A >= .71 (y), one point per
    setting (seed mean; the bars span the seeds), coloured by family of factors and marked by factor;
    the paper's value a star."""
    import matplotlib.pyplot as plt

    from .... import plots

    paper = PAPER_FIGURE1 if paper is None else paper
    groups: dict[str, str] = {}
    for factor, labels in FACTORS.items():  # a setting shared by two factors takes the first one's colour
        for lab in labels:
            if lab != "base (balanced, x0.1)":
                groups.setdefault(lab, factor)
    # eleven factors, but at most eight colours a reader can tell apart: one colour per family of
    # factors (the text before its parenthesis; horizon and length together), a marker per factor
    # within it; black the base setting, crimson the paper
    def family(factor: str) -> str:
        return "schedule" if factor in ("cosine horizon", "training length") else factor.split(" (")[0]

    palette = [plt.get_cmap("tab10").colors[i] for i in (0, 1, 2, 4, 5, 9)]
    families = list(dict.fromkeys(family(f) for f in FACTORS))
    colors = {f: palette[families.index(family(f)) % len(palette)] for f in FACTORS}
    markers = {}
    for f in FACTORS:
        markers[f] = "osD^v"[sum(family(g) == family(f) for g in markers)]
    with plots.paper_style():
        fig, axes = plots.panel_grid(len(BRANCHES), cols=2, panel_height=3.0)
        for ax, branch in zip(axes, BRANCHES):
            sub = selected[selected["branch"] == branch]
            for label, g in sub.groupby("setting", sort=False):
                factor = groups.get(label)
                color = "black" if factor is None else colors[factor]
                marker = "o" if factor is None else markers[factor]
                x, y = g["active_pct"], g["A071_pct"]
                ax.errorbar(x.mean(), y.mean(), xerr=[[x.mean() - x.min()], [x.max() - x.mean()]],
                            yerr=[[y.mean() - y.min()], [y.max() - y.mean()]], fmt=marker, ms=4.5, color=color, lw=0.8,
                            alpha=0.85)
            n_act, a71, _ = paper[branch]
            ax.plot(100 * n_act / PAPER_FIGURE1_WIDTH, a71, marker="*", ms=14, color="crimson", mec="black", ls="none")
            ax.set_title(branch)
            ax.set_xlim(0, 102)
            ax.set_ylim(-2, 102)
            ax.set_xlabel("active share of the width (%)")
            ax.set_ylabel("% of active with $A_j \\geq 0.71$")
        handles = [plt.Line2D([], [], marker=markers[f], ls="none", color=c, label=f) for f, c in colors.items()]
        handles += [plt.Line2D([], [], marker="o", ls="none", color="black", label="base (balanced, x0.1)"),
                    plt.Line2D([], [], marker="*", ms=12, ls="none", color="crimson", mec="black", label=f"the paper (width {thousands(PAPER_FIGURE1_WIDTH)})")]
        fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False)
    return fig


# --- the study's answers -------------------------------------------------------------------------


def ranking(result: dict, paper: dict | None = None) -> pd.DataFrame:
    """Every setting scored on the table and on the paper's fingerprints, best first (most cosine
    cells within 10 points of the paper's, then the smallest mean distance): the mean distance to
    the paper's table (points) and the cosine cells within 10 points (:func:`paper_distance`); the ReLU rate validation picks per seed and the selected checkpoint's
    step as a share of the run (the paper: 0.004 at 0.925); in how many of the gated networks'
    (network, seed) pairs the stated rate is the best of the three tried; the ReLU dead share and
    test MSE."""
    sel = selected_frame(result)
    dist = paper_distance(sel, paper)[["distance (points)", WITHIN]]
    fp = fingerprints(result)
    gated = [f"{a}_stated_over_best" for a in ("gelu", "reglu", "swiglu")]
    per = fp.groupby("setting", sort=False).agg(
        **{"ReLU rate picked": ("relu_rate", lambda v: ", ".join(f"{x:g}" for x in v)),
           "ReLU best step / steps": ("relu_best_step_share", "mean")})
    per["stated rate best"] = fp.groupby("setting", sort=False)[gated].apply(
        lambda g: f"{int((np.isclose(g.to_numpy(), 1.0)).sum())} of {g.size}")
    relu = setting_means(sel).xs("relu", level="branch")[["dead_pct", "test_mse"]].rename(
        columns={"dead_pct": "ReLU dead %", "test_mse": "ReLU test MSE"})
    return dist.join(per).join(relu).sort_values([WITHIN, "distance (points)"], ascending=[False, True])


def dead_neurons(selected: pd.DataFrame, branch: str = "relu") -> pd.DataFrame:
    """The dead-neuron hypothesis, per setting (seed means, one branch): the active share, the
    share of the width that is active and not dead, the share of the width that is dead, the share of the *active* set that is dead, and the share of
    the width carrying 90 % of the importance."""
    m = setting_means(selected).xs(branch, level="branch")
    m["alive_active_pct"] = m["active_pct"] * (1 - m["dead_of_active_pct"] / 100)
    return m[["active_pct", "alive_active_pct", "dead_pct", "dead_of_active_pct", "spread90_pct", "A071_pct", "test_mse"]].rename(columns={
        "active_pct": "active %", "alive_active_pct": "active and alive %", "dead_pct": "dead % of width", "dead_of_active_pct": "dead % of active",
        "spread90_pct": "% of width carrying 90 %", "A071_pct": "A ≥ .71 %", "test_mse": "test MSE"})


def gate_value_split(selected: pd.DataFrame, labels: Sequence[str] = FACTORS["value branch scale"], paper: dict | None = None) -> pd.DataFrame:
    """The gate / value hypothesis: per setting (seed means), the ReGLU gate's and value branch's
    cosine columns and the gate-minus-value gaps, beside the paper's."""
    paper = PAPER_FIGURE1 if paper is None else paper
    m = setting_means(selected)
    rows = []
    pg, pv = paper["reglu gate"], paper["reglu value"]
    rows.append({"setting": "the paper", "gate A ≥ .71 %": pg[1], "value A ≥ .71 %": pv[1], "gap A ≥ .71": pg[1] - pv[1],
                 "gate A ≥ .90 %": pg[2], "value A ≥ .90 %": pv[2], "gap A ≥ .90": pg[2] - pv[2]})
    for label in labels:
        if (label, "reglu gate") not in m.index:
            continue
        g, v = m.loc[(label, "reglu gate")], m.loc[(label, "reglu value")]
        rows.append({"setting": label, "gate A ≥ .71 %": g["A071_pct"], "value A ≥ .71 %": v["A071_pct"], "gap A ≥ .71": g["A071_pct"] - v["A071_pct"],
                     "gate A ≥ .90 %": g["A090_pct"], "value A ≥ .90 %": v["A090_pct"], "gap A ≥ .90": g["A090_pct"] - v["A090_pct"]})
    return pd.DataFrame(rows).set_index("setting")


_TOWARD = {"closer": "closer to", "farther": "farther from", "no closer": "no closer to"}


def _closer(now: float, before: float, target: float, margin: float = MOVE_PP) -> str:
    """"closer", "farther" or "no closer" to ``target``, by more than ``margin`` points."""
    if abs(now - target) < abs(before - target) - margin:
        return "closer"
    if abs(now - target) > abs(before - target) + margin:
        return "farther"
    return "no closer"


def study_numbers(result: dict, paper: dict | None = None) -> dict[str, str]:
    """The sentences page 03 writes about the study, each with the numbers that show it, computed
    from the record: ``dead_text`` (hypothesis 1), ``value_text`` (hypothesis 2), ``fingerprint_text``
    and ``answer_text`` (the closest setting, whether any reaches 10 of the 12 cosine cells within
    10 points, and the factors that move each column most)."""
    paper = PAPER_FIGURE1 if paper is None else paper
    sel = selected_frame(result)
    return {"dead_text": _dead_text(sel, paper), "value_text": _value_text(sel, paper),
            "fingerprint_text": _fingerprint_text(result), "answer_text": _answer_text(sel, paper)}


def _dead_text(sel: pd.DataFrame, paper: dict) -> str:
    """Hypothesis 1: dead neurons counted as active."""
    dead = dead_neurons(sel)
    most = dead["dead % of width"].idxmax()
    r = float(np.corrcoef(dead["active %"], dead["dead % of width"])[0, 1]) if len(dead) > 2 else math.nan
    counted = dead.loc[most, "dead % of active"]
    paper_active = 100 * paper["relu"][0] / PAPER_FIGURE1_WIDTH
    return (
        f"The largest share of ReLU neurons dies under “{most}”: {dead.loc[most, 'dead % of width']:.0f} % of the width is dead on the whole "
        f"training set, and {counted:.0f} % of its active set are dead neurons, which the 99.9 % rule counts because a dead "
        f"neuron keeps the importance it had when it died. Counting live neurons only, its active share would be "
        f"{dead.loc[most, 'active and alive %']:.0f} % instead of {dead.loc[most, 'active %']:.0f} % (the paper: {paper_active:.1f} %; "
        f"test MSE {dead.loc[most, 'test MSE']:.2g}). Over all {len(dead)} settings the ReLU dead share and active share correlate "
        f"at r = {r:+.2f}. "
        + ("Supported: the rule counts dead neurons, and the active share rises with the dead share." if counted >= 20 and r > 0.3 else
           "Supported in part: the rule does count dead neurons, in numbers that matter to the active share, but across settings "
           "the active share does not rise with the dead share, so deaths do not set it." if counted >= 20 else
           "Not supported: dead neurons are not a material part of any active set here."))


def _value_text(sel: pd.DataFrame, paper: dict) -> str:
    """Hypothesis 2: a value branch initialized smaller than the gate."""
    split = gate_value_split(sel, paper=paper)
    smallest = [lab for lab in FACTORS["value branch scale"] if lab in split.index][-1]
    base = "base (balanced, x0.1)"
    if base not in split.index or smallest == base:
        return "The value-branch settings are not recorded."
    verdicts = [_closer(split.loc[smallest, c], split.loc[base, c], split.loc["the paper", c]) for c in ("gap A ≥ .71", "gap A ≥ .90")]
    return (
        f"With the value rows at “{smallest}” the ReGLU gate-minus-value gap is {split.loc[smallest, 'gap A ≥ .71']:+.1f} points "
        f"(A ≥ .71) and {split.loc[smallest, 'gap A ≥ .90']:+.1f} (A ≥ .90), against {split.loc[base, 'gap A ≥ .71']:+.1f} and "
        f"{split.loc[base, 'gap A ≥ .90']:+.1f} at the base and the paper's {split.loc['the paper', 'gap A ≥ .71']:+.1f} and "
        f"{split.loc['the paper', 'gap A ≥ .90']:+.1f}: {_TOWARD[verdicts[0]]} the paper on the first column and {_TOWARD[verdicts[1]]} "
        f"it on the second (by more than {MOVE_PP:g} points). The hypothesis is "
        + ("supported." if verdicts == ["closer", "closer"] else "supported on one column only." if "closer" in verdicts else "not supported."))


def _fingerprint_text(result: dict) -> str:
    """The paper's fingerprints: the ReLU rate validation picks and where its checkpoint lies."""
    fp = fingerprints(result)
    rate = LR_A1["relu"]
    picks = fp.groupby("setting")["relu_rate"].apply(lambda v: bool(np.isclose(v, rate).all()))
    late = fp.groupby("setting")["relu_best_step_share"].mean()
    matched = [s for s in picks.index if picks[s]]
    return (
        (f"Validation picks the paper's ReLU rate {rate:g} on every seed under {count(len(matched), 'setting')}: "
         + ", ".join(f"“{s}” (best checkpoint at {late[s]:.2f} of the run)" for s in matched) + "."
         if matched else f"No setting makes validation pick the paper's ReLU rate {rate:g} on every seed; the rates picked are "
         f"{', '.join(f'{x:g}' for x in sorted(set(fp['relu_rate'])))}.")
        + f" Across settings the selected checkpoint lies at {span(late, '.2f')} of the run (the paper: {paper_best_step_share():.3g}).")


def paper_best_step_share() -> float:
    """Where Appendix A.1's validation-selected ReLU checkpoint lies, as a share of its run: the
    selected update (:data:`~monosem.train.A1_RELU_BEST_STEP`) over the paper profile's ReLU update
    budget."""
    return A1_RELU_BEST_STEP / get_profile("paper").specialization.max_steps_relu


def _answer_text(sel: pd.DataFrame, paper: dict) -> str:
    """The study's answer: which settings reach the table, the closest one, the factors that move
    each column most."""
    dist = paper_distance(sel, paper)
    best = dist["distance (points)"].idxmin()
    top = int(dist[WITHIN].max())
    most_cells = dist[dist[WITHIN] == top].sort_values("distance (points)").index.tolist()
    reach = dist.index[dist[WITHIN] >= REACH_CELLS].tolist()
    eff = factor_effects(sel, columns=("active_pct", "A071_pct"))
    movers = []
    for col, name in (("active_pct", "active share"), ("A071_pct", "% with A ≥ .71")):
        mean_move = eff.xs(col, level="measure", axis=1).mean(axis=1).sort_values(ascending=False)
        movers.append(f"the {name} moves most with the {mean_move.index[0]} ({mean_move.iloc[0]:.0f} points on average over the {len(paper)} rows), "
                      f"then the {mean_move.index[1]} ({mean_move.iloc[1]:.0f})")
    movers_text = "; ".join(movers)
    width, cells = STUDY_BASE.width, 2 * len(paper)
    return (
        (f"{count(len(reach), 'setting')} {'brings' if len(reach) == 1 else 'bring'} at least {REACH_CELLS} of the {cells} cosine cells within {WITHIN_PP:g} points of "
         f"the paper at width {thousands(width)}: " + ", ".join(f"“{s}”" for s in reach) + "." if reach else
         f"No setting brings {REACH_CELLS} of the {cells} cosine cells within {WITHIN_PP:g} points of the paper at width "
         f"{thousands(width)}; the most is {top}, under "
         + ", ".join(f"“{s}” ({dist.loc[s, 'distance (points)']:.1f} points on average)" for s in most_cells) + ".")
        + f" The closest setting overall is “{best}”, {dist.loc[best, 'distance (points)']:.1f} points from the paper's table on average "
        f"({int(dist.loc[best, WITHIN])} of {cells} cosine cells within {WITHIN_PP:g}). "
        + movers_text[:1].upper() + movers_text[1:] + f". {count(sel['setting'].nunique(), 'setting')}, "
        f"{count(len(STUDY_SEEDS), 'seed')} each.")


def _plot_cells(profile, records: dict, source: str = "", cache=None):
    """The map (:func:`plot_map`) of the study's cells ``{job: record}``: ``monosem plot
    figure1-study`` (the study's settings are the same at every profile)."""
    if not records:
        raise ValueError("no cell of the figure1 study to draw: run `python -m monosem study figure1` first")
    fig = plot_map(selected_frame(study_of_records(records)))
    fig.suptitle("Figure 1 sensitivity study (width 512): active share against % with $A_j \\geq 0.71$"
                 + (f", {source}" if source else ""))
    return fig


register_plot("figure1-study", _plot_cells)