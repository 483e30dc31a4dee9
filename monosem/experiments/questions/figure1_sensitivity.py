"""What controls Figure 1's active share and alignment: a sensitivity study (Section 3.1, A.1).

The paper trains its Figure 1 networks under a "balanced feature-learning initialization" and
"Adam under the corresponding width-aware parameterization", and says no more. Each
:class:`Setting` fixes one reading of every choice left open (hidden initialization scale, the
readout's initial value, the readout's learning rate relative to the hidden layer's, the gated
value branch's initial scale, the cosine horizon, the training length); :func:`measure` trains the
four networks of one seed under it and records, per network, everything the table and the
paper's own fingerprints need:

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
:class:`StudyData` (Figure 1's K, the setting's training size, the seed), method
:data:`METHOD` with the :class:`Setting` as its spec, computed by :func:`measure`; the figure
``figure1-study`` (:func:`study_jobs`, the same cells at every profile) is run, recorded (at
profile :data:`RECORDED_PROFILE`) and exported like every other figure, and an interrupted study
resumes where it stopped. :func:`run_study` and :func:`recorded_study` give the study as one
dictionary; :mod:`.figure1_study_page` holds what page 03 reads from it (the map, the ranking,
each factor's effect, the hypotheses).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import asdict, dataclass, replace
from typing import Any, Iterable, Sequence

import torch

from ...checks import check_choice, check_int, check_positive
from ...data import figure1_model
from ...models import GATED, MLP, MLPStack
from ...specialization import active_set, importance, specialization_table
from ...train import LR_A1, TrainConfig, TrainData, mse, train
from ..cache import Job, ResultCache
from ..recorded import load_recorded_cells
from ..registry import register_method, register_rows
from ..runner import run_jobs
from ..sweeps import Figure, register_figure

__all__ = ["Setting", "SETTINGS", "STUDY_SEEDS", "StudyData", "METHOD", "RECORDED_PROFILE", "measure", "study_job", "study_jobs",
           "compute_study_cell", "run_study", "study_of_records", "recorded_study", "study_rows", "dead_share", "GATED_RATE_FACTORS",
           "RECORDED_NAME"]

#: the readout's initial value: zero (monosem.models' default), balanced |a_j| = ||(w_j, b_j)||,
#: or PyTorch's nn.Linear default U(+-1/sqrt(width))
READOUT_INITS = {"zero": "pytorch", "balanced": "balanced", "standard": "standard"}
#: the gated networks' rates tried around the paper's stated one (the fingerprint)
GATED_RATE_FACTORS = (0.25, 1.0, 4.0)
#: the paper's six ReLU rates (Appendix A.1)
RELU_RATES = (0.004, 0.008, 0.012, 0.016, 0.024, 0.032)
STUDY_SEEDS = (0, 1)
#: the cells' method and figure
METHOD = "figure1-study"
#: the profile the study's cells are recorded at (``monosem study figure1 --record``); the
#: study's sizes are its settings', the same at every profile
RECORDED_PROFILE = "cpu"
#: the named file the study was recorded in before its cells (found through
#: :data:`monosem.experiments.legacy.NAMED_RECORDS`)
RECORDED_NAME = "figure1_sensitivity_w512"


@dataclass(frozen=True)
class Setting:
    """One reading of the choices Appendix A.1 leaves open, at a reduced scale: a study cell's spec.

    ``hidden_scale``: hidden weights and biases ``U(+-1/sqrt(d))`` times this; ``readout_init``:
    one of :data:`READOUT_INITS`; ``readout_lr``: the readout's Adam rate over the hidden layer's;
    ``value_scale``: the gated value rows' initial scale relative to the gate rows; ``steps``:
    updates of every network (ReLU and the others alike); ``horizon``: the cosine decays to a
    tenth over ``horizon * steps`` updates (1: over the run, as A.1)."""

    hidden_scale: float = 0.1
    readout_init: str = "balanced"
    readout_lr: float = 1.0
    value_scale: float = 1.0
    steps: int = 6_000
    horizon: float = 1.0
    width: int = 512
    batch: int = 256
    n_train: int = 100_000
    n_val: int = 4_096
    n_test: int = 2_048
    eval_every: int = 250

    def __post_init__(self) -> None:
        check_positive(self.hidden_scale, "hidden_scale")
        check_choice(self.readout_init, "readout_init", tuple(READOUT_INITS))
        check_positive(self.readout_lr, "readout_lr")
        check_positive(self.value_scale, "value_scale")
        for name in ("steps", "width", "batch", "n_train", "n_val", "n_test", "eval_every"):
            check_int(getattr(self, name), name)
        if not self.horizon >= 1:
            raise ValueError(f"horizon must be >= 1 (the cosine's length over the run's), got {self.horizon!r}")


_BASE = Setting()
_m, _d = _BASE.width, 40
#: The study's settings by label: the base (the book's Figure 1 reading at width 512) and one
#: factor at a time around it, plus the probe's all-small reading and the standard / NTK / muP
#: parameterizations at full scale.
SETTINGS: dict[str, Setting] = {
    "base (balanced, x0.1)": _BASE,
    # initialization scale (balanced readout)
    "balanced x1": replace(_BASE, hidden_scale=1.0),
    "balanced x0.3": replace(_BASE, hidden_scale=0.3),
    "balanced x0.03": replace(_BASE, hidden_scale=0.03),
    "balanced x0.01": replace(_BASE, hidden_scale=0.01),
    # the readout's initial value
    "zero readout x0.1": replace(_BASE, readout_init="zero"),
    "standard readout x0.1": replace(_BASE, readout_init="standard"),
    "zero readout x1": replace(_BASE, readout_init="zero", hidden_scale=1.0),
    "zero readout x0.01": replace(_BASE, readout_init="zero", hidden_scale=0.01),
    "standard x0.01": replace(_BASE, readout_init="standard", hidden_scale=0.01),
    "standard x0.03": replace(_BASE, readout_init="standard", hidden_scale=0.03),
    # parameterizations (Adam: the readout's initial value and relative rate)
    "standard (PyTorch)": replace(_BASE, readout_init="standard", hidden_scale=1.0),
    "NTK": replace(_BASE, readout_init="standard", hidden_scale=1.0, readout_lr=round(math.sqrt(_d / _m), 4)),
    "muP / mean-field (base 2 048)": replace(_BASE, readout_init="zero", hidden_scale=1.0, readout_lr=2048 / _m),
    "readout rate x0.1": replace(_BASE, readout_lr=0.1),
    "readout rate x0.28": replace(_BASE, readout_lr=round(math.sqrt(_d / _m), 4)),
    "readout rate x4": replace(_BASE, readout_lr=4.0),
    # the gated value branch smaller than the gate
    "value x0.3": replace(_BASE, value_scale=0.3),
    "value x0.1": replace(_BASE, value_scale=0.1),
    # the cosine horizon and the training length
    "horizon x2": replace(_BASE, horizon=2.0),
    "horizon x10": replace(_BASE, horizon=10.0),
    "steps 2 000": replace(_BASE, steps=2_000),
    "steps 12 000": replace(_BASE, steps=12_000),
    "NTK x0.1": replace(_BASE, readout_init="standard", readout_lr=round(math.sqrt(_d / _m), 4)),
}


def _data(s: Setting, seed: int, device):
    m = figure1_model()
    # the data's seeds follow the network seed, so two seeds are two independent replicates
    x, y, _ = m.sample(s.n_train, 10 * seed + 1, device=device)
    xv, yv, _ = m.sample(s.n_val, 10 * seed + 2, device=device)
    xt, yt, _ = m.sample(s.n_test, 10 * seed + 3, device=device)
    return TrainData(x, y, xv, yv), (xt, yt)


def _rates(activation: str) -> tuple[float, ...]:
    return RELU_RATES if activation == "relu" else tuple(LR_A1[activation] * f for f in GATED_RATE_FACTORS)


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


def _network_rows(model: MLP, s: Setting, seed: int, lr: float, val: float, test: float, best_step: int, x_train: torch.Tensor) -> list[dict]:
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


def _stack(s: Setting, activation: str, seeds: Sequence[int], device) -> MLPStack:
    stack = MLPStack(40, s.width, activation, list(seeds), hidden_scale=s.hidden_scale, init=READOUT_INITS[s.readout_init],
                     readout_lr_scale=s.readout_lr, device=device)
    if activation in GATED and s.value_scale != 1.0:
        with torch.no_grad():  # the value rows (and their biases) only; "balanced" keeps |a_j| as drawn
            stack.W[:, s.width:] *= s.value_scale
            stack.b[:, s.width:] *= s.value_scale
    return stack


def measure(s: Setting, seed: int, *, device: str | torch.device | None = None, progress: bool = False) -> dict:
    """Train every network of one seed under ``s`` (ReLU at the paper's six rates, the gated
    networks and GELU at :data:`GATED_RATE_FACTORS` times their stated rates) and return
    ``{"rows": [...], "seconds"}``: one row per network and branch (see the module docstring)."""
    dev = torch.device("cpu") if device is None else torch.device(device)
    data, (xt, yt) = _data(s, seed, dev)
    rows, t0 = [], time.perf_counter()
    for activation in ("relu", "gelu", "reglu", "swiglu"):
        rates = _rates(activation)
        stack = _stack(s, activation, [seed] * len(rates), dev)
        cfg = TrainConfig(max_steps=s.steps, batch=s.batch, lr=rates[0], final_lr_ratio=0.1, protocol="a1", eval_every=s.eval_every,
                          schedule_steps=None if s.horizon == 1 else int(round(s.horizon * s.steps)))
        res = train(stack, data, cfg, lrs=list(rates), progress=progress, desc=f"{activation} x{len(rates)}")
        test = mse(res.stack, xt, yt).tolist()
        for i, net in enumerate(res.models()):
            rows += _network_rows(net, s, seed, rates[i], float(res.best_value[i]), test[i], int(res.best_step[i]), data.x_train)
    return {"rows": rows, "seconds": time.perf_counter() - t0}




# --- the study's cells ---------------------------------------------------------------------------

@dataclass(frozen=True)
class StudyData:
    """A study cell's data: Figure 1's model (``K`` clusters, :func:`~monosem.data.figure1_model`),
    ``n`` training points (the setting's ``n_train``) and ``run``, the seed of the networks and of
    the samples (:func:`measure`). Everything else the cell reads is its :class:`Setting`."""

    K: int
    n: int
    run: int


def study_job(s: Setting, seed: int, profile: str = RECORDED_PROFILE) -> Job:
    """The cell of setting ``s`` at seed ``seed`` (``profile`` only names who declared it: it is
    not part of the cell's key)."""
    return Job(METHOD, StudyData(figure1_model().K, s.n_train, int(seed)), s, profile)


def study_jobs(settings: dict[str, Setting] | None = None, seeds: Iterable[int] | None = None,
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


def _study_sizes(P) -> dict[str, Setting]:
    """The study's grid at any profile: its own settings (their sizes are the study's)."""
    return SETTINGS


register_method(METHOD, compute=compute_study_cell)
register_figure(Figure(METHOD, "What moves Figure 1's table: the sensitivity study at width 512 (Section 3.1, A.1)", (METHOD,),
                       _study_sizes, jobs=_figure_jobs))


def _study(settings: dict[str, Setting], cells: list[tuple[str, Job, dict[str, Any]]]) -> dict[str, Any]:
    """``{"settings": {label: asdict(setting)}, "cells": [{"label", "seed", "seconds", "rows"}]}``
    from ``(label, job, record)`` triples (a cell's seconds: :func:`measure`'s training time)."""
    return {"settings": {label: asdict(s) for label, s in settings.items()},
            "cells": [{"label": label, "seed": job.run, "seconds": rec["metrics"]["seconds"], "rows": rec["metrics"]["rows"]}
                      for label, job, rec in cells]}


def run_study(settings: dict[str, Setting] | None = None, seeds: Iterable[int] = STUDY_SEEDS, *, cache: ResultCache | None = None,
              device: str | torch.device | None = None, progress: bool = True, compute: bool = True, part: tuple[int, int] = (0, 1)) -> dict:
    """Every (setting, seed) of the study (Section 3.1, A.1) from the result store ``cache``
    (default: ``$MONOSEM_CACHE``, else ``results/cache``), the missing cells computed and stored
    at once (:func:`~monosem.experiments.runner.run_jobs`). Returns ``{"settings": {label:
    asdict(setting)}, "cells": [{"label", "seed", "seconds", "rows"}]}``, the cells in the order
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
