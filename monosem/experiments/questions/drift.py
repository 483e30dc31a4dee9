"""Page 10, question 5: **drift** (:func:`drift_runs`). On the Figure 1 model, a network trained
on the original predictive directions continues on directions rotated toward fresh coordinates;
which of its specialized neurons re-align and which are recruited, against a network trained from
scratch on the drifted task.

Every angle is a cell of the result store (:mod:`monosem.experiments.cache`): data
:class:`DriftData`, method ``"drift"`` with the settings :class:`DriftSpec`, the figure ``drift``
(:func:`drift_jobs`), computed, cached, recorded and exported like every other figure.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from ...data import DRIFT_ANGLES, ClusteredSingleIndexModel, drifted_model, figure1_model
from ...device import get_device
from ...models import MLP, MLPStack
from ...tables import percent
from ...profiles import Profile, get_profile
from ...train import LR_A1, TrainConfig, TrainData, a1_config, mse, train
from ..cache import Job, ResultCache
from ..methods import load_network, save_network
from ..registry import register_cost, register_method, register_rows
from ..runner import run_jobs
from ..sweeps import Figure, register_figure
from ._tables import frame
from .overlap import PREMISE_SHARE
from .figure1.base import FIGURE1_READING, FIGURE1_SAMPLE_SEEDS
from ..estimate import DeviceModel, mlp_update_seconds

__all__ = ["DriftData", "Phase1Data", "DriftSpec", "drift_spec", "drift_jobs", "compute_drift", "drift_runs", "drift_export_rows",
           "drift_frame", "drift_findings", "drift_answer"]

#: the specialization threshold of Figure 1 (A_j >= 1/sqrt 2: half the squared norm on one v_c)
_A_SPECIALIZED = 0.71


@dataclass(frozen=True)
class Phase1Data:
    """The phase-1 network's data: ``n`` training and ``n_val`` validation points (the A.1
    checkpoint is validation-selected) of :func:`~monosem.data.figure1_model` (K clusters), drawn
    with :data:`~.figure1.base.FIGURE1_SAMPLE_SEEDS`; ``run``: the network seed's index."""

    K: int
    n: int
    run: int
    n_val: int


@dataclass(frozen=True)
class DriftData:
    """A drift cell's data: Figure 1's training, validation and test sets (``n``, ``n_val``,
    ``n_test`` points, :data:`~.figure1.base.FIGURE1_SAMPLE_SEEDS`) of
    :func:`~monosem.data.figure1_model` (K clusters) and of its
    :func:`~monosem.data.drifted_model` at ``angle`` degrees (the same inputs and clusters, new
    targets); ``run``: the index of the networks' seed in the profile's Figure 1 seeds."""

    K: int
    n: int
    run: int
    n_val: int
    n_test: int
    angle: float

    def models(self) -> tuple[ClusteredSingleIndexModel, ClusteredSingleIndexModel]:
        """(the Figure 1 model, its drifted model at ``angle``)."""
        old = figure1_model()
        if old.K != self.K:
            raise ValueError(f"K={self.K} is not the Figure 1 model's K={old.K}")
        return old, drifted_model(old, self.angle)

    def phase1(self) -> Phase1Data:
        """What the phase-1 network is trained on (shared by every angle and test size)."""
        return Phase1Data(self.K, self.n, self.run, self.n_val)


@dataclass(frozen=True)
class DriftSpec:
    """Every setting a drift cell reads beyond its data: the networks (activation, width, the
    reading's hidden initialization scale, initialization and readout rate factor), the A.1
    protocol of each phase (``steps`` updates, batch, evaluation period, learning rate, the
    hand-derived step's revision) and ``seed``, the phase-1 network's seed (the scratch network's
    is ``seed + 1``)."""

    activation: str
    width: int
    steps: int
    batch: int
    eval_every: int
    step_revision: int
    lr: float
    hidden_scale: float
    init: str
    readout_lr_scale: float
    seed: int

    def train_config(self) -> TrainConfig:
        """The Appendix A.1 :class:`~monosem.train.TrainConfig` of each phase."""
        return a1_config(self.activation, max_steps=self.steps, batch=self.batch, lr=self.lr, eval_every=self.eval_every,
                         step_revision=self.step_revision)


def drift_spec(P: Profile, activation: str = "relu", run: int = 0) -> DriftSpec:
    """The drift cells' settings at profile ``P``: Figure 1's width, batch and evaluation period,
    ``max_steps_relu`` updates per phase for ReLU (``max_steps_other`` otherwise), the A.1 rate,
    the reading :data:`~.figure1.base.FIGURE1_READING` and the profile's seed ``run``."""
    s, reading = P.specialization, FIGURE1_READING
    steps = s.max_steps_relu if activation == "relu" else s.max_steps_other
    return DriftSpec(activation, int(s.width), int(steps), int(s.batch), int(s.eval_every), int(P.step_revision),
                     float(LR_A1[activation]), float(reading.hidden_scale), reading.init,
                     float(reading.readout_lr_scale(s.width)), int(s.seeds[run]))


def drift_jobs(profile: str | Profile, angles: Sequence[float] = DRIFT_ANGLES, *, activation: str = "relu", run: int = 0) -> list[Job]:
    """The drift cells at ``profile``: one per angle (degrees), in the order of ``angles``, at
    Figure 1's sizes of the profile."""
    P = get_profile(profile)
    s = P.specialization
    spec = drift_spec(P, activation, run)
    K = figure1_model().K
    return [Job("drift", DriftData(K, int(s.n_train), int(run), int(s.n_val), int(s.n_test), float(a)), spec, P.name) for a in angles]


def _figure_jobs(P: Profile) -> list[Job]:
    return drift_jobs(P)


def _sample(model: ClusteredSingleIndexModel, n: int, which: str, dev: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` points of ``model`` drawn with Figure 1's ``which`` seed (a drifted model gives the
    same inputs and clusters, new targets)."""
    x, y, _ = model.sample(n, FIGURE1_SAMPLE_SEEDS[which], device=dev)
    return x, y


def _train_data(model: ClusteredSingleIndexModel, data: DriftData | Phase1Data, dev: torch.device) -> TrainData:
    """Figure 1's training and validation sets (Appendix A.1 sizes, our sample seeds) of ``model``."""
    return TrainData(*_sample(model, data.n, "train", dev), *_sample(model, data.n_val, "val", dev))


def _fit(spec: DriftSpec, start: MLP | None, data: TrainData, seed: int, dev: torch.device) -> MLP:
    """An A.1 run of ``spec``: from ``start``'s weights (a fresh Adam state and schedule), or from
    a fresh network of seed ``seed``."""
    stack = (MLPStack.from_models([start]) if start is not None else
             MLPStack(figure1_model().d, spec.width, spec.activation, [seed], hidden_scale=spec.hidden_scale, init=spec.init,
                      readout_lr_scale=spec.readout_lr_scale, device=dev))
    return train(stack, data, spec.train_config(), lrs=[spec.lr], progress=False).models()[0]


def _phase1_job(job: Job) -> Job:
    """The key of a drift cell's phase-1 network (a file beside the cache, not a cell): its data
    (:class:`Phase1Data`) and the cell's settings. Every angle (and test size) of a run shares it."""
    return Job("drift-phase1", job.data.phase1(), job.spec, job.profile)


def _phase1(job: Job, cache: ResultCache | None, dev: torch.device) -> MLP:
    """The phase-1 network of ``job``: the one saved beside ``cache`` (tensors only, read with
    weights_only=True), else trained on the original directions and saved there."""
    # Phase 1 is saved, not retrained in every angle's cell: it is one of a cell's three trainings,
    # and a loaded network holds the very weights a retraining gives (same seed, same data), so it
    # continues exactly as a fresh one would. Two cells computed at once may both train it; each
    # writes the same file atomically.
    p1, spec = _phase1_job(job), job.spec
    if cache is not None:
        empty = MLP(figure1_model().d, spec.width, spec.activation, seed=spec.seed, hidden_scale=spec.hidden_scale, init=spec.init,
                    readout_lr_scale=spec.readout_lr_scale, device=dev)
        try:
            return load_network(p1, cache, empty, "phase-1 network")
        except FileNotFoundError:
            pass
    net = _fit(spec, None, _train_data(figure1_model(), p1.data, dev), spec.seed, dev)
    save_network(cache, p1, net)
    return net


def _aligned(net: MLP, directions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The active neurons of ``net`` (indices), their A_j and maximizing c_j against ``directions``."""
    from ...specialization import active_set, alignment, importance

    act = active_set(importance(net))
    A, c = alignment(net.W.detach()[act.to(net.W.device)].double().cpu(), directions)
    return act.cpu(), A, c


def _specialized(net: MLP, directions: torch.Tensor) -> tuple[int, dict[int, int]]:
    """The active neurons' count and the specialized ones (A_j >= 0.71): neuron -> cluster."""
    act, A, c = _aligned(net, directions)
    return int(len(act)), {int(j): int(k) for j, a, k in zip(act, A, c) if a >= _A_SPECIALIZED}


def compute_drift(job: Job, cache: ResultCache | None = None, *, device: str | torch.device | None = None,
                  phase1: MLP | None = None) -> dict[str, Any]:
    """One drift cell (page 10, question 5), at the angle of ``job.data``: the phase-1 network
    (``phase1`` when the caller has it, else :func:`_phase1`), continued on the drifted data, and a
    network trained on it from scratch (seed ``spec.seed + 1``). Returns the row of
    :func:`drift_runs` for this angle and ``test_mse``, the continued network's test MSE on the
    drifted task."""
    spec, data = job.spec, job.data
    dev = get_device(device)
    old, new = data.models()
    first = phase1 if phase1 is not None else _phase1(job, cache, dev)
    xt1, yt1 = _sample(old, data.n_test, "test", dev)
    xt2, yt2 = _sample(new, data.n_test, "test", dev)
    data2 = _train_data(new, data, dev)
    cont = _fit(spec, first, data2, spec.seed, dev)
    scratch = _fit(spec, None, data2, spec.seed + 1, dev)  # another initialization: not phase 1's starting point
    active1, spec1 = _specialized(first, old.directions)
    active2, spec2 = _specialized(cont, new.directions)
    _, A_old, _ = _aligned(cont, old.directions)
    _, A_s, _ = _aligned(scratch, new.directions)
    realigned = [j for j, c in spec2.items() if spec1.get(j) == c]
    W1, W2 = first.W.detach().double().cpu(), cont.W.detach().double().cpu()
    moved = [float(torch.nn.functional.cosine_similarity(W1[j], W2[j], dim=0)) for j in realigned]
    row = {
        "angle": float(data.angle), "overlap": math.cos(math.radians(data.angle)), "steps": spec.steps, "width": spec.width,
        "phase1_test_old": float(mse(first, xt1, yt1)), "phase1_test_new": float(mse(first, xt2, yt2)),
        "continued_test": float(mse(cont, xt2, yt2)), "scratch_test": float(mse(scratch, xt2, yt2)),
        "spec_phase1": len(spec1), "active_phase1": active1, "spec_phase2": len(spec2), "active_phase2": active2,
        "still_old": int((A_old >= _A_SPECIALIZED).sum()), "spec_scratch": int((A_s >= _A_SPECIALIZED).sum()),
        "realigned": len(realigned), "recruited": sum(1 for j in spec2 if j not in spec1),
        "lost": sum(1 for j in spec1 if j not in spec2), "realigned_cosine": float(np.mean(moved)) if moved else None,
    }
    return row | {"test_mse": row["continued_test"]}


register_method("drift", compute=compute_drift)
register_figure(Figure("drift", "Drifting directions: re-aligned or recruited neurons on the Figure 1 model (beyond the paper)",
                       ("drift",), "specialization", jobs=_figure_jobs))

#: the keys of a :func:`drift_runs` row, in order
_ROW_KEYS = ("angle", "overlap", "steps", "width", "phase1_test_old", "phase1_test_new", "continued_test", "scratch_test",
             "spec_phase1", "active_phase1", "spec_phase2", "active_phase2", "still_old", "spec_scratch", "realigned", "recruited",
             "lost", "realigned_cosine")


def drift_runs(profile: str | Profile, angles: Sequence[float] = DRIFT_ANGLES, *, activation: str = "relu",
               device: str | torch.device | None = None, cache: ResultCache | None = None) -> list[dict[str, Any]]:
    """Page 10, question 5: do specialized neurons follow drifting predictive directions?

    On :func:`~monosem.data.figure1_model` (the model of Figure 1, whose neurons specialize
    strongly) a ``activation`` network of the profile's Figure 1 sizes is trained as Appendix A.1
    (the reading :data:`~monosem.experiments.questions.figure1.base.FIGURE1_READING`, the A.1 rate, the
    validation-selected checkpoint, ``max_steps_relu`` updates for ReLU): phase 1 on the original
    directions; then, for every angle, phase 2 continues the *same* network (a fresh Adam state
    and schedule: a new run started from the phase-1 weights, our choice) on
    :func:`~monosem.data.drifted_model` data for as many updates; beside it a network trained on
    the drifted data from scratch with the same budget. Every angle is a cell (:func:`drift_jobs`),
    read from ``cache`` when given (a finished cell is never recomputed), computed here otherwise.
    Returns one dict per angle: the test MSE of the continued and the scratch network on the
    drifted task (and of the phase-1 network on both tasks), and the specialized neurons
    (A_j >= 0.71): after phase 1 against the old directions, after phase 2 against the new ones,
    and how many of the latter are the same neurons re-aligned (same cluster), recruited (not
    specialized after phase 1), or lost."""
    jobs = drift_jobs(profile, angles, activation=activation)
    if cache is None:
        # every angle continues the same phase-1 network: trained once here
        first = _phase1(jobs[0], None, get_device(device)) if jobs else None
        metrics = [compute_drift(job, device=device, phase1=first) for job in jobs]
    else:
        records = run_jobs(jobs, functools.partial(compute_drift, device=device), cache, desc="drift")
        metrics = [records[job]["metrics"] for job in jobs]
    # the row's keys in their order (a cached record holds them sorted)
    return [{k: m[k] for k in _ROW_KEYS} for m in metrics]


def drift_export_rows(records: dict) -> list[dict[str, Any]]:
    """The drift cells (``{job: record}``) as export rows, one per angle (sorted): the network's
    activation, the cell's K, n and run, the fields of its :func:`drift_runs` row (in that row's
    order) and ``test_mse``, and the cell's key."""
    rows = []
    for job, rec in sorted(records.items(), key=lambda kv: (kv[0].spec.activation, kv[0].run, kv[0].data.angle)):
        m = rec["metrics"]
        rows.append({"method": job.method, "activation": job.spec.activation, "K": job.K, "n": job.n, "run": job.run,
                     **{k: m.get(k) for k in (*_ROW_KEYS, "test_mse")}, "key": job.key()})
    return rows


register_rows("drift", drift_export_rows)


#: the columns of :func:`drift_frame` -> the keys of a :func:`drift_runs` row
_DRIFT_COLUMNS = {"angle (degrees)": "angle", "cos angle": "overlap", "continued test MSE": "continued_test",
                  "scratch test MSE": "scratch_test", "phase-1 test MSE": "phase1_test_new", "specialized": "spec_phase2",
                  "re-aligned": "realigned", "recruited": "recruited", "lost": "lost",
                  "still specialized on old": "still_old", "scratch specialized": "spec_scratch", "width": "width",
                  "updates per phase": "steps", "phase-1 specialized": "spec_phase1", "phase-1 active": "active_phase1"}


def drift_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """:func:`drift_runs` as a table, one row per angle: the cosine between an old and a new
    direction; the test MSE on the drifted task of the continued network, of the one trained from
    scratch for as many updates, and of the phase-1 network; the specialized neurons (A_j >= 0.71)
    after phase 2 against the new directions, of which ``re-aligned`` were specialized on the same
    cluster after phase 1 and ``recruited`` were not; ``lost``: phase-1 specialized neurons that no
    longer are; the continued network's neurons still specialized on the old directions; the
    scratch network's specialized neurons; and the run's width, updates per phase, and specialized
    and active neurons after phase 1."""
    # the cosine to 12 decimals: cos 90 degrees is 6e-17 in floating point, 0 here
    out = [{col: round(r[key], 12) if key == "overlap" else r[key] for col, key in _DRIFT_COLUMNS.items()} for r in rows]
    return frame(out, list(_DRIFT_COLUMNS), "angle (degrees)")


def _drift_verdict(r: dict[str, Any]) -> tuple[str, float]:
    """At one angle: whether the phase-2 specialized neurons are mostly re-aligned or recruited,
    and the continued / scratch test MSE (below 1: phase 1 helps the drifted task)."""
    return "re-aligned" if r["realigned"] >= r["recruited"] else "recruited", r["continued_test"] / r["scratch_test"]


def _fate(r: dict[str, Any]) -> str:
    """At one angle, what became of the phase-1 specialized neurons: "most lost" when more than
    half no longer are specialized, "most re-aligned" when more than half are on the same cluster's
    new direction, otherwise "split"."""
    half = r["spec_phase1"] / 2
    return "most lost" if r["lost"] > half else "most re-aligned" if r["realigned"] > half else "split"


def drift_answer(rows: list[dict[str, Any]]) -> str:
    """The question's answer in one line per angle: what became of the phase-1 specialized
    neurons (re-aligned or lost, of how many), whether the phase-2 specialized neurons are mostly
    re-aligned or recruited, and whether phase 1 helps the drifted task. Both counts are given, so
    that "mostly re-aligned" (of the new specialists) is never read as "most neurons re-aligned".
    Where phase 1 left (almost) no specialized neuron (:data:`~.overlap.PREMISE_SHARE` of the
    active ones) the premise is absent, and the line says so instead."""
    out = []
    for r in rows:
        if r["active_phase1"] == 0 or r["spec_phase1"] / r["active_phase1"] < PREMISE_SHARE:
            # nothing specialized to follow the drift: the question's premise is absent
            out.append(f"{r['angle']:g} degrees: not answered at this scale, the premise is absent ({r['spec_phase1']} of "
                       f"{r['active_phase1']} active neurons specialized after phase 1; the question needs "
                       f"{100 * PREMISE_SHARE:.2g} %)")
            continue
        fate = (f"of {r['spec_phase1']} specialized neurons {r['realigned']} re-aligned and {r['lost']} lost "
                f"({_fate(r)})")
        if r["spec_phase2"] == 0:
            out.append(f"{r['angle']:g} degrees: {fate}; no neuron specialized on the new directions")
            continue
        which, ratio = _drift_verdict(r)
        out.append(f"{r['angle']:g} degrees: {fate}; the new specialists mostly {which} "
                   f"({r['realigned']} re-aligned, {r['recruited']} recruited); phase 1 {'helps' if ratio < 1 else 'hurts'} "
                   f"(continued / scratch {ratio:.2f})")
    return "; ".join(out) or "no angle computed yet"


def drift_findings(rows: list[dict[str, Any]]) -> str:
    """The verdict per angle, computed: re-aligned or recruited (whichever supplies more of the
    phase-2 specialized neurons), how far the re-aligned neurons moved (cosine between their
    phase-1 and phase-2 weights), and whether phase 1 helps the drifted task (continued against
    scratch test MSE)."""
    lines = []
    for r in rows:
        total = r["spec_phase2"]
        if total == 0:
            lines.append(f"{r['angle']:g} degrees: no neuron specialized on the new directions")
            lines.append(f"  of the {r['spec_phase1']} phase-1 specialists {r['lost']} lost")
            continue
        which, ratio = _drift_verdict(r)
        lines.append(f"{r['angle']:g} degrees: of the {total} specialized neurons {percent(r['realigned'] / total)} "
                     f"re-aligned, {percent(r['recruited'] / total)} recruited")
        lines.append(f"  -> the new specialists mostly {which}")
        lines.append(f"  of the {r['spec_phase1']} phase-1 specialists {r['realigned']} re-aligned, {r['lost']} lost: "
                     f"{_fate(r)}")
        if r["realigned_cosine"] is not None:
            lines.append(f"  re-aligned neurons: cosine {r['realigned_cosine']:.2f} with their phase-1 weights "
                         f"(directions: {r['overlap']:.2f})")
        lines.append(f"  {r['still_old']} active neurons are still specialized on the old directions")
        lines.append(f"  continued / scratch test MSE {ratio:.2f}: phase 1 " + ("helps" if ratio < 1 else "hurts")
                     + " the drifted task")
    return "\n".join(lines)


def page_cost(P: Profile, device: DeviceModel) -> dict[str, float]:
    """The drift runs' share of page 10's heavy work (:mod:`~..estimate`): phase 1, then per angle
    the continued and the scratch network, at Figure 1's sizes."""
    f = P.specialization
    d = figure1_model().d
    return {"drift": (1 + 2 * len(DRIFT_ANGLES)) * f.max_steps_relu * mlp_update_seconds(f.width, f.batch, d, "relu", device, 1)}


register_cost("10_beyond_experts", page_cost, question=5)
