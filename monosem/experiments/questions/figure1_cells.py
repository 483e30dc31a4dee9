"""Figure 1's table under one reading of the initialization, as a cell of the result store
(Section 3.1, Appendix A.1).

A cell (:func:`reading_job`) is the method :data:`METHOD` on :class:`Figure1Data` (Figure 1's
model and its fixed sample seeds) with :class:`ReadingSpec`: the reading (every field of
:class:`~.specialization.Reading` that the training reads), the profile's Figure 1 training sizes
(width, batch, updates, the ReLU rate grid, the seeds) and the training step's revision.
Computing it trains the four networks of every seed (:func:`~.figure1_readings.reading_ablation`
of that one reading), resuming from checkpoints kept beside the cache; its metrics are the
reading's entry of that result (the Figure 1 rows per branch and seed, the rates, the wall time,
and with ``neurons`` the drawn neurons, the ReLU rate search and the importance spread).

``python -m monosem readings --profile P [--width W] [--readings NAME ...]`` computes the cells
and ``--record`` ships them; :func:`recorded_readings` gathers the recorded cells of a profile and
width into the result shape the page reads. Figure 1 runs recorded before they were cells (one
named file per run) are found through :data:`monosem.experiments.legacy.NAMED_RECORDS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd

from ...data import figure1_model
from ...profiles import Profile, SpecializationSizes, get_profile
from ...specialization import PAPER_FIGURE1
from ...train import STEP_REVISIONS
from ..cache import EARLIER_SECONDS, Job, ResultCache
from ..recorded import load_recorded_cells
from ..registry import register_method, register_rows
from ..sweeps import Figure, register_figure
from .figure1_readings import ablation_scores, reading_ablation
from .figure1 import FIGURE1_READING, READINGS, STUDY_READINGS, Reading, branch_means

__all__ = ["METHOD", "Figure1Data", "ReadingSpec", "reading_job", "reading_jobs", "compute_reading", "recorded_readings",
           "study_paper_records", "width_check", "reading_rows"]

#: the cell's method
METHOD = "figure1-reading"
#: every reading a cell may hold, by name
KNOWN_READINGS = {r.name: r for r in READINGS + STUDY_READINGS}


@dataclass(frozen=True)
class Figure1Data:
    """Figure 1's data: ``n`` training, ``n_val`` validation and ``n_test`` test points of
    :func:`~monosem.data.figure1_model` (K clusters), drawn with
    :data:`~.specialization.FIGURE1_SAMPLE_SEEDS` (``run`` 0: one fixed draw; the networks'
    seeds are the spec's)."""

    K: int
    n: int
    run: int
    n_val: int
    n_test: int


@dataclass(frozen=True)
class ReadingSpec:
    """One reading of the initialization (its name and every field the training reads) and the
    Figure 1 training of Appendix A.1 at a profile's sizes: width, batch, updates (ReLU, others),
    evaluation interval, the ReLU rate grid validation chooses from, the networks' seeds, the
    training step's revision; ``neurons``: also keep the drawn neurons, the ReLU rate search and
    the importance spread."""

    reading: str
    init: str
    hidden_scale: float
    mup_base_width: int | None
    readout_lr: float | None
    value_scale: float
    width: int
    batch: int
    max_steps_relu: int
    max_steps_other: int
    eval_every: int
    relu_lr_grid: tuple[float, ...]
    seeds: tuple[int, ...]
    step_revision: int
    neurons: bool

    def as_reading(self) -> Reading:
        """The :class:`~.specialization.Reading` (its description from the known readings)."""
        source = KNOWN_READINGS[self.reading].source if self.reading in KNOWN_READINGS else ""
        return Reading(self.reading, init=self.init, hidden_scale=self.hidden_scale, mup_base_width=self.mup_base_width,
                       source=source, readout_lr=self.readout_lr, value_scale=self.value_scale)

    def sizes(self, data: Figure1Data) -> SpecializationSizes:
        """The Figure 1 sizes the training reads (the ablation settings at their defaults)."""
        return SpecializationSizes(width=self.width, n_train=data.n, n_val=data.n_val, n_test=data.n_test, batch=self.batch,
                                   max_steps_relu=self.max_steps_relu, max_steps_other=self.max_steps_other,
                                   eval_every=self.eval_every, relu_lr_grid=self.relu_lr_grid, seeds=self.seeds)


def reading_job(profile: Profile, reading: Reading, *, width: int | None = None, step_revision: int | None = None,
                neurons: bool = False) -> Job:
    """The cell of ``reading`` at ``profile``'s Figure 1 sizes (``width`` instead of the profile's
    when given; the profile's step revision unless ``step_revision``)."""
    s = profile.specialization
    revision = profile.step_revision if step_revision is None else int(step_revision)
    if revision not in STEP_REVISIONS:
        raise ValueError(f"step_revision must be one of {list(STEP_REVISIONS)}, got {revision}")
    spec = ReadingSpec(reading.name, reading.init, float(reading.hidden_scale), reading.mup_base_width,
                       None if reading.readout_lr is None else float(reading.readout_lr), float(reading.value_scale),
                       int(width if width is not None else s.width), s.batch, s.max_steps_relu, s.max_steps_other, s.eval_every,
                       tuple(float(r) for r in s.relu_lr_grid), tuple(int(x) for x in s.seeds), revision, bool(neurons))
    data = Figure1Data(figure1_model().K, s.n_train, 0, s.n_val, s.n_test)
    return Job(METHOD, data, spec, profile.name)


def reading_jobs(profile: Profile, readings: Sequence[Reading] = READINGS, *, width: int | None = None,
                 step_revision: int | None = None, neurons: bool | None = None) -> list[Job]:
    """The cells of ``readings`` at ``profile`` (a muP reading at its own base width is the plain
    one and is left out); ``neurons`` by default only for a single reading (a paper-scale run)."""
    keep = len(readings) == 1 if neurons is None else neurons
    w = width if width is not None else profile.specialization.width
    return [reading_job(profile, r, width=w, step_revision=step_revision, neurons=keep) for r in readings if r.mup_base_width != w]


def compute_reading(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    """Train the cell's reading (:func:`~.figure1_readings.reading_ablation`), resuming from the
    checkpoints under ``<cache>/checkpoints/<key>`` (none without a cache): the reading's entry,
    with the width, batch and seeds; the earlier sittings' wall time goes to the cell's timing."""
    spec: ReadingSpec = job.spec
    checkpoints = None if cache is None else cache.root / "checkpoints" / job.key()
    result = reading_ablation(spec.sizes(job.data), [spec.as_reading()], checkpoint_dir=checkpoints, neurons=spec.neurons,
                              step_revision=spec.step_revision)
    entry = dict(result["readings"][spec.reading])
    entry[EARLIER_SECONDS] = entry.get("earlier_seconds", 0.0)
    return entry | {"width": result["width"], "batch": result["batch"], "seeds": result["seeds"]}


register_method(METHOD, compute=compute_reading)
register_figure(Figure("figure1-readings", "Figure 1 under each reading of the initialization (Section 3.1)", (METHOD,),
                       "specialization", jobs=lambda P: reading_jobs(P)))
# Figure 1 itself: the table under the reading the book uses, at the profile's sizes
register_figure(Figure("fig1", "Figure 1: specialized first-layer neurons (Section 3.1)", (METHOD,), "specialization",
                       jobs=lambda P: [reading_job(P, FIGURE1_READING)]))


def recorded_readings(profile: str, width: int, readings: Sequence[Reading] = READINGS) -> dict[str, Any] | None:
    """The recorded cells of ``readings`` at ``profile`` and ``width`` (each at whichever step
    revision it was recorded, the profile's first) in the shape :func:`~.figure1_readings.reading_ablation`
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
    (:data:`.specialization.STUDY_READINGS`), by name (:func:`recorded_readings`); ``None`` where
    not recorded."""
    return {r.name: recorded_readings("paper", get_profile("paper").specialization.width, [r]) for r in STUDY_READINGS}


def _nearer(gain: float) -> str:
    """A gain in mean distance to the paper's table, in words."""
    return f"{abs(gain):.1f} points {'closer to' if gain > 0 else 'farther from'}"


def width_check(study: Sequence[Reading] = STUDY_READINGS, widths: tuple[int, int] = (512, 2048)) -> tuple[pd.DataFrame, str]:
    """Does a study reading's gain over the balanced reading survive a wider network? Under the
    cpu profile's protocol (its updates, batch, ReLU rate grid and seeds; only the width changes),
    per reading and width: the ReLU network's active share and % with A >= .71 and the ReGLU
    gate's and value branch's % with A >= .71 (seed means; the value scale moves only the gated
    networks), and the mean distance to the paper's table
    (:func:`~.figure1_readings.ablation_scores`); and one sentence per study reading recorded at both widths:
    its gain (the balanced reading's distance minus its own) at each width, and what that says."""
    recs = {w: recorded_readings("cpu", w, (FIGURE1_READING, *study)) for w in widths}
    rows = []
    for w, rec in recs.items():
        if rec is None:
            continue
        scores = ablation_scores(rec["results"])
        for name, entry in rec["results"]["readings"].items():
            means = branch_means(entry["rows"])
            rows.append({"reading": name, "width": w, "ReLU active %": means["relu"]["active_pct"],
                         "ReLU A ≥ .71 %": means["relu"]["A071_pct"], "ReGLU gate A ≥ .71 %": means["reglu gate"]["A071_pct"],
                         "ReGLU value A ≥ .71 %": means["reglu value"]["A071_pct"],
                         "mean distance (points)": scores[name]["mean_pp"]})
    frame = pd.DataFrame(rows).set_index(["reading", "width"]) if rows else pd.DataFrame()
    dist = {key: row["mean distance (points)"] for key, row in frame.iterrows()} if rows else {}
    lines = []
    for r in study:
        if not all((r.name, w) in dist and (FIGURE1_READING.name, w) in dist for w in widths):
            continue
        small, wide = (dist[(FIGURE1_READING.name, w)] - dist[(r.name, w)] for w in widths)
        if small <= 0:
            what = ("it is no closer at the smaller width under this protocol (the study's searched six ReLU rates and "
                    "three gated rates), so this check cannot tell what undoes its gain")
        elif wide >= small / 2:
            what = ("its gain survives the wider network at this training length, so the width alone does not undo it; "
                    "what else differs at the paper's scale (longer training, batch 2 048, the six-rate ReLU search) "
                    "is not separated here")
        else:
            what = "the wider network loses most of its gain, so the width undoes it, at this training length already"
        lines.append(f"'{r.name}' is {_nearer(small)} the paper's table than '{FIGURE1_READING.name}' at width {widths[0]} "
                     f"and {_nearer(wide)} it at width {widths[1]}: {what}.")
    return frame, " ".join(lines) or "The study's readings have not run at both widths under the cpu protocol yet."


def reading_rows(records: dict) -> list[dict[str, Any]]:
    """The reading cells (``{job: record}``) as export rows: one per (reading, branch, seed), the
    Figure 1 columns (counts and shares; test MSE and rate of the seed's network) beside the
    paper's cosine columns (``paper_*``, in percent as printed; its D columns are not legible),
    with the cell's step revision and key."""
    rows = []
    for job, rec in records.items():
        spec: ReadingSpec = job.spec
        for row in rec["metrics"]["rows"]:
            paper = PAPER_FIGURE1.get(row["branch"], (None, None, None))
            rows.append({"reading": spec.reading, **row, "paper_n_active": paper[0], "paper_pct_A071": paper[1],
                         "paper_pct_A090": paper[2], "step_revision": spec.step_revision, "key": job.key()})
    return rows


register_rows("figure1-readings", reading_rows)
register_rows("fig1", reading_rows)
