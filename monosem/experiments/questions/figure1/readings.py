"""Which reading of the paper's "balanced feature-learning initialization" matches its Figure 1
table, and does the table reproduce at the paper's own scale? (Section 3.1, Appendix A.1.)

Both answers come from recorded runs, too long for a book build: the **readings ablation** trains
the whole table under each reading of :data:`~.base.READINGS` at the cpu profile's sizes and
scores each by its distance to the paper's table (:func:`reading_ablation`,
:func:`ablation_scores`, :func:`ablation_verdict`); the **paper-scale runs** train one reading at
the paper's sizes and keep, besides the table, the neurons page 03 draws, the ReLU table at every
searched rate and the spread of the importance (:func:`paper_comparison_frame`,
:func:`paper_scale_verdict`, :func:`paper_scale_numbers`).

Each reading at a profile's sizes is a cell of the result store (:func:`reading_job`): the method
:data:`METHOD` on :class:`Figure1Data` (Figure 1's model and its fixed sample seeds) with the
:class:`~.base.Reading` as its spec. Computing it trains the four networks of every seed
(:func:`reading_entry`), resuming from checkpoints kept beside the cache. ``python -m monosem
readings --profile P [--width W] [--readings NAME ...]`` computes the cells and ``--record`` ships
them; :func:`recorded_readings` gathers the recorded cells of a profile and width into the shape
the page reads (the runs recorded in one named file per run before they were cells are such
cells now). What page 03 shows of these records lives
beside this module, one module per seam, and is re-exported here: the tables
(:mod:`.readings_analysis`), the answers and the page's words (:mod:`.readings_words`) and the
drawn neurons (:mod:`.readings_figures`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd
import torch

from ....data import figure1_model
from ....device import get_device
from ....profiles import Profile, SpecializationSizes, get_profile
from ....specialization import PAPER_FIGURE1, active_set, importance, specialization_table, top_aligned
from ....train import STEP_REVISION, STEP_REVISIONS
from ...cache import EARLIER_SECONDS, Job, ResultCache
from ...recorded import load_recorded_cells
from ...registry import register_method, register_rows
from ...sweeps import Figure, register_figure
from .base import FIGURE1_READING, READINGS, STUDY_READINGS, Figure1Run, Reading, figure1_data, table_row, table_rows, train_figure1
from .readings_analysis import (ablation_frame, ablation_scores, ablation_summary, importance_spread_frame, paper_comparison_frame,
                                rate_frame, width_frame)
from .readings_figures import drawn_neuron_figures
from .readings_words import (ablation_report, ablation_verdict, paper_run_report, paper_scale_numbers, paper_scale_tables,
                             paper_scale_verdict, study_paper_report, study_paper_text, width_words)

__all__ = ["rate_rows", "rate_frame", "SPREAD_FRACTIONS", "importance_spread", "importance_spread_frame", "figure_neurons",
           "reading_entry", "reading_ablation", "paper_comparison_frame", "ablation_scores", "ablation_frame", "ablation_summary",
           "ablation_verdict", "paper_scale_verdict", "paper_scale_numbers", "METHOD", "Figure1Data", "reading_job", "reading_jobs",
           "compute_reading", "recorded_readings", "study_paper_records", "width_check", "reading_rows", "ablation_report",
           "paper_run_report", "drawn_neuron_figures", "paper_scale_tables", "study_paper_report", "study_paper_text"]


def rate_rows(run: Figure1Run) -> list[dict]:
    """The Figure 1 rows of every candidate of a learning-rate search (the ReLU grid), selected or
    not, as :func:`~.base.table_rows` gives them plus ``val_mse`` and ``selected``: how
    the table depends on the rate that validation picks (the paper reports picking 0.004)."""
    directions = figure1_model().directions
    chosen = set(zip(run.lrs, run.seeds))
    return [table_row(r, c.seed, c.test_mse, c.lr) | {"val_mse": float(c.val_mse), "selected": (c.lr, c.seed) in chosen}
            for c in run.candidates for r in specialization_table(c.model, directions)]


#: shares of the total importance at which :func:`importance_spread` counts the neurons needed
SPREAD_FRACTIONS = (0.5, 0.9, 0.99, 0.999)


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


def reading_entry(reading: Reading, *, data=None, device: str | torch.device | None = None,
                  checkpoint_dir: str | os.PathLike | None = None, progress: bool = True) -> dict:
    """Train the four Figure 1 networks of every seed under ``reading`` (:func:`~.base.train_figure1`)
    and return its whole table: ``{"rows": [{branch, seed, n_active, width, frac_A071, frac_A090,
    frac_D1, frac_D2, test_mse, lr}], "seconds", "earlier_seconds", "source", "lrs"}``.
    ``seconds`` is the training wall time, the earlier sittings of networks resumed from
    ``checkpoint_dir`` included; ``earlier_seconds`` is those. With the reading's ``neurons`` it
    also keeps :func:`figure_neurons`, ``relu_rates`` (the ReLU table at every rate of the search,
    :func:`rate_rows`) and :func:`importance_spread`."""
    dev = get_device(device)
    data = data if data is not None else figure1_data(reading, device=dev)
    runs = {act: train_figure1(reading, act, data=data, device=dev, checkpoint_dir=checkpoint_dir, progress=progress)
            for act in ("relu", "gelu", "reglu", "swiglu")}
    # the whole runs' training time, earlier sittings of resumed ones included
    entry = {"rows": table_rows(runs), "seconds": sum(r.seconds + r.earlier_seconds for r in runs.values()),
             "earlier_seconds": sum(r.earlier_seconds for r in runs.values()), "source": reading.source,
             "lrs": {act: list(run.lrs) for act, run in runs.items()}}
    if reading.neurons:
        entry |= {"neurons": figure_neurons(runs), "relu_rates": rate_rows(runs["relu"]), "importance_spread": importance_spread(runs)}
    return entry


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
    """The readings ablation: each of ``readings`` at ``sizes`` (with ``neurons`` and the training
    step's ``step_revision``) through :func:`reading_entry`, as ``{"width", "batch", "seeds",
    "step_revision", "readings": {name: entry}}``. A muP reading at its base width is the plain one
    and is skipped."""
    dev = get_device(device)
    first = FIGURE1_READING.at(sizes)
    data = data if data is not None else figure1_data(first, device=dev)
    out = {"width": sizes.width, "batch": sizes.batch, "seeds": list(sizes.seeds), "step_revision": int(step_revision), "readings": {}}
    for reading in readings:
        if reading.mup_base_width == sizes.width:
            continue
        at = reading.at(sizes, step_revision=int(step_revision), neurons=neurons)
        out["readings"][reading.name] = reading_entry(at, data=data, device=dev, checkpoint_dir=checkpoint_dir, progress=progress)
    return out


#: the cell's method
METHOD = "figure1-reading"


@dataclass(frozen=True)
class Figure1Data:
    """Figure 1's data: ``n`` training, ``n_val`` validation and ``n_test`` test points of
    :func:`~monosem.data.figure1_model` (K clusters), drawn with
    :data:`~.base.FIGURE1_SAMPLE_SEEDS` (``run`` 0: one fixed draw; the networks' seeds are the
    spec's)."""

    K: int
    n: int
    run: int
    n_val: int
    n_test: int


def reading_job(profile: Profile, reading: Reading, *, width: int | None = None, step_revision: int | None = None,
                neurons: bool = False) -> Job:
    """The cell of ``reading`` at ``profile``'s Figure 1 sizes (``width`` instead of the profile's
    when given; the profile's step revision unless ``step_revision``)."""
    s = profile.specialization
    revision = profile.step_revision if step_revision is None else int(step_revision)
    if revision not in STEP_REVISIONS:
        raise ValueError(f"step_revision must be one of {list(STEP_REVISIONS)}, got {revision}")
    spec = reading.at(s, width=int(width if width is not None else s.width), step_revision=revision, neurons=bool(neurons))
    data = Figure1Data(figure1_model().K, spec.n_train, 0, spec.n_val, spec.n_test)
    return Job(METHOD, data, spec, profile.name)


def reading_jobs(profile: Profile, readings: Sequence[Reading] = READINGS, *, width: int | None = None,
                 step_revision: int | None = None, neurons: bool | None = None) -> list[Job]:
    """The cells of ``readings`` at ``profile`` (a muP reading at its own base width is the plain
    one and is left out); ``neurons`` by default only for a single reading (a paper-scale run)."""
    keep = len(readings) == 1 if neurons is None else neurons
    w = width if width is not None else profile.specialization.width
    return [reading_job(profile, r, width=w, step_revision=step_revision, neurons=keep) for r in readings if r.mup_base_width != w]


def compute_reading(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    """Train the cell's reading (:func:`reading_entry`), resuming from the checkpoints under
    ``<cache>/checkpoints/<key>`` (none without a cache): the reading's entry, with the width,
    batch and seeds; the earlier sittings' wall time goes to the cell's timing."""
    spec: Reading = job.spec
    if (job.data.n, job.data.n_val, job.data.n_test) != (spec.n_train, spec.n_val, spec.n_test):
        raise ValueError(f"{job.label()}: the data's sizes {job.data} are not the reading's n_train={spec.n_train}, "
                         f"n_val={spec.n_val}, n_test={spec.n_test}")
    checkpoints = None if cache is None else cache.root / "checkpoints" / job.key()
    entry = reading_entry(spec, checkpoint_dir=checkpoints)
    entry[EARLIER_SECONDS] = entry.get("earlier_seconds", 0.0)
    return entry | {"width": spec.width, "batch": spec.batch, "seeds": list(spec.seeds)}


register_method(METHOD, compute=compute_reading)
register_figure(Figure("figure1-readings", "Figure 1 under each reading of the initialization (Section 3.1)", (METHOD,),
                       "specialization", jobs=lambda P: reading_jobs(P)))
# Figure 1 itself: the table under the reading the book uses, at the profile's sizes
register_figure(Figure("fig1", "Figure 1: specialized first-layer neurons (Section 3.1)", (METHOD,), "specialization",
                       jobs=lambda P: [reading_job(P, FIGURE1_READING)]))


def recorded_readings(profile: str, width: int, readings: Sequence[Reading] = READINGS) -> dict[str, Any] | None:
    """The recorded cells of ``readings`` at ``profile`` and ``width`` (each at whichever step
    revision it was recorded, the profile's first) in the shape :func:`reading_ablation`
    returns, with the profile, the first cell's date and machine and the cells' summed wall time:
    ``{"profile", "recorded", "seconds", "machine", "results": {"width", "batch", "seeds",
    "step_revision", "readings": {name: entry}}}``; ``None`` when none is recorded."""
    P = get_profile(profile)
    revisions = [P.step_revision] + [r for r in STEP_REVISIONS if r != P.step_revision]
    # every candidate cell of every reading, in order of preference, looked up in one pass
    candidates = {reading.name: [(rev, reading_job(P, reading, width=width, step_revision=rev, neurons=n))
                                 for rev in revisions for n in (len(readings) == 1, len(readings) != 1)]
                  for reading in readings}
    records = load_recorded_cells([job for cands in candidates.values() for _, job in cands], profile)
    found: dict[str, dict[str, Any]] = {}
    for name, cands in candidates.items():
        hit = next(((rev, records[job]) for rev, job in cands if job in records), None)
        if hit is not None:
            found[name] = hit[1] | {"step_revision": hit[0]}
    if not found:
        return None
    first = next(iter(found.values()))
    m = first["metrics"]
    entries = {name: {k: v for k, v in rec["metrics"].items() if k not in ("width", "batch", "seeds")} for name, rec in found.items()}
    return {"profile": first.get("profile", profile), "recorded": first["timing"].get("finished"),
            "seconds": sum(rec["timing"]["seconds"] for rec in found.values()), "machine": first.get("machine", {}),
            "results": {"width": m["width"], "batch": m["batch"], "seeds": m["seeds"], "step_revision": first["step_revision"],
                        "readings": entries}}


def study_paper_records() -> dict[str, dict[str, Any] | None]:
    """The paper-scale runs of the sensitivity study's best readings
    (:data:`~.base.STUDY_READINGS`), by name (:func:`recorded_readings`); ``None`` where
    not recorded."""
    return {r.name: recorded_readings("paper", get_profile("paper").specialization.width, [r]) for r in STUDY_READINGS}


def width_check(study: Sequence[Reading] = STUDY_READINGS, widths: tuple[int, int] = (512, 2048)) -> tuple[pd.DataFrame, str]:
    """Does a study reading's gain over the balanced reading survive a wider network? Under the
    cpu profile's protocol (its updates, batch, ReLU rate grid and seeds; only the width changes),
    per reading and width: the ReLU network's active share and % with A >= .71 and the ReGLU
    gate's and value branch's % with A >= .71 (seed means; the value scale moves only the gated
    networks), and the mean distance to the paper's table
    (:func:`ablation_scores`); and one sentence per study reading recorded at both widths:
    its gain (the balanced reading's distance minus its own) at each width, and what that says
    (:func:`~.readings_analysis.width_frame`, :func:`~.readings_words.width_words`)."""
    frame = width_frame({w: recorded_readings("cpu", w, (FIGURE1_READING, *study)) for w in widths})
    return frame, width_words(frame, study, widths)


def reading_rows(records: dict) -> list[dict[str, Any]]:
    """The reading cells (``{job: record}``) as export rows: one per (reading, branch, seed), the
    Figure 1 columns (counts and shares; test MSE and rate of the seed's network) beside the
    paper's cosine columns (``paper_*``, in percent as printed; its D columns are not legible),
    with the cell's step revision and key."""
    rows = []
    for job, rec in records.items():
        spec: Reading = job.spec
        for row in rec["metrics"]["rows"]:
            paper = PAPER_FIGURE1.get(row["branch"], (None, None, None))
            rows.append({"reading": spec.name, **row, "paper_n_active": paper[0], "paper_pct_A071": paper[1],
                         "paper_pct_A090": paper[2], "step_revision": spec.step_revision, "key": job.key()})
    return rows


register_rows("figure1-readings", reading_rows)
register_rows("fig1", reading_rows)
