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
and the modules beside this one, re-exported here, are its settings (:mod:`.study_settings`) and
what page 03 reads from it: its tables, each factor's effect and the ranking against the paper's
table (:mod:`.study_analysis`), its map (:mod:`.study_figures`, ``monosem plot figure1-study``)
and the sentences about the two hypotheses (:mod:`.study_words`).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from typing import Any, Iterable

import torch

from ....data import figure1_model
from ....models import MLP
from ....specialization import active_set, importance, specialization_table
from ...cache import Job, ResultCache
from ...recorded import load_recorded_cells
from ...registry import register_method, register_plot, register_rows
from ...runner import run_jobs
from ...sweeps import Figure, register_figure
from .base import Reading, figure1_data, train_figure1
from .study_analysis import (BRANCHES, FACTORS, MOVE_PP, REACH_CELLS, WITHIN, WITHIN_PP, dead_neurons, factor_effects, fingerprints,
                             gate_value_split, paper_distance, ranking, selected_frame, setting_means, study_frame)
from .study_figures import plot_map
# the cells below read SETTINGS (and measure) as names of this module: replacing study.SETTINGS
# (a test's smaller study) changes the study they run, record and export
from .study_settings import SETTINGS, STUDY_BASE, STUDY_SEEDS, setting
from .study_words import paper_best_step_share, study_numbers

__all__ = ["STUDY_BASE", "SETTINGS", "STUDY_SEEDS", "setting", "StudyData", "METHOD", "RECORDED_PROFILE", "measure",
           "study_job", "study_jobs", "compute_study_cell", "run_study", "study_of_records", "recorded_study", "study_rows", "dead_share",
           "study_frame", "selected_frame", "fingerprints", "paper_distance", "FACTORS", "BRANCHES", "setting_means", "factor_effects",
           "plot_map", "ranking", "dead_neurons", "gate_value_split", "study_numbers", "WITHIN_PP", "WITHIN", "REACH_CELLS",
           "MOVE_PP", "paper_best_step_share"]

#: the cells' method and figure
METHOD = "figure1-study"
#: the profile the study's cells are recorded at (``monosem study figure1 --record``); the
#: study's sizes are its settings', the same at every profile
RECORDED_PROFILE = "cpu"


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
    :data:`RECORDED_PROFILE` (among them those of the study recorded as one named file before
    it was cells). Returns ``{"recorded": the latest cell's date, "seconds": the cells' wall
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
