"""Page 10, question 5: **drift** (:func:`drift_runs`). On the Figure 1 model, a network trained
on the original predictive directions continues on directions rotated toward fresh coordinates;
which of its specialized neurons re-align and which are recruited, against a network trained from
scratch on the drifted task.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import torch

from ...data import DRIFT_ANGLES
from ...profiles import Profile, get_profile
from ._tables import frame

__all__ = ["drift_runs", "drift_frame", "drift_findings", "drift_answer"]

#: the specialization threshold of Figure 1 (A_j >= 1/sqrt 2: half the squared norm on one v_c)
_A_SPECIALIZED = 0.71


def _phase_data(model, sizes, device):
    """Figure 1's training, validation and test sets (Appendix A.1 sizes and our sample seeds)
    drawn from ``model``: a drifted model gives the same inputs and clusters, new targets."""
    from .specialization import FIGURE1_SAMPLE_SEEDS
    from ...train import TrainData

    x, y, _ = model.sample(sizes.n_train, FIGURE1_SAMPLE_SEEDS["train"], device=device)
    xv, yv, _ = model.sample(sizes.n_val, FIGURE1_SAMPLE_SEEDS["val"], device=device)
    xt, yt, _ = model.sample(sizes.n_test, FIGURE1_SAMPLE_SEEDS["test"], device=device)
    return TrainData(x, y, xv, yv), (xt, yt)


def _aligned(net, directions) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The active neurons of ``net`` (indices), their A_j and maximizing c_j against ``directions``."""
    from ...specialization import active_set, alignment, importance

    act = active_set(importance(net))
    A, c = alignment(net.W.detach()[act.to(net.W.device)].double().cpu(), directions)
    return act.cpu(), A, c


def drift_runs(profile: str | Profile, angles=DRIFT_ANGLES, *, activation: str = "relu", device=None) -> list[dict[str, Any]]:
    """Page 10, question 5: do specialized neurons follow drifting predictive directions?

    On :func:`~monosem.data.figure1_model` (the model of Figure 1, whose neurons specialize
    strongly) a ``activation`` network of the profile's Figure 1 sizes is trained as Appendix A.1
    (the reading :data:`~monosem.experiments.questions.specialization.FIGURE1_READING`, the A.1 rate, the
    validation-selected checkpoint, ``max_steps_relu`` updates for ReLU): phase 1 on the original
    directions; then, for every angle, phase 2 continues the *same* network (a fresh Adam state
    and schedule: a new run started from the phase-1 weights, our choice) on
    :func:`~monosem.data.drifted_model` data for as many updates; beside it a network trained on
    the drifted data from scratch with the same budget. Returns one dict per angle: the test MSE
    of the continued and the scratch network on the drifted task (and of the phase-1 network on
    both tasks), and the specialized neurons (A_j >= 0.71): after phase 1 against the old
    directions, after phase 2 against the new ones, and how many of the latter are the same
    neurons re-aligned (same cluster), recruited (not specialized after phase 1), or lost."""
    from ...data import drifted_model, figure1_model
    from ...device import get_device
    from ...models import MLP, MLPStack
    from ...train import LR_A1, a1_config, mse, train
    from .specialization import FIGURE1_READING

    P = get_profile(profile)
    s = P.specialization
    dev = get_device(device)
    old = figure1_model()
    steps = s.max_steps_relu if activation == "relu" else s.max_steps_other
    cfg = a1_config(activation, max_steps=steps, batch=s.batch, eval_every=s.eval_every, step_revision=P.step_revision)
    reading = FIGURE1_READING
    seed = s.seeds[0]

    def fit(start: MLP | None, data, run_seed: int) -> MLP:
        stack = (MLPStack.from_models([start]) if start is not None else
                 MLPStack(old.d, s.width, activation, [run_seed], hidden_scale=reading.hidden_scale, init=reading.init,
                          readout_lr_scale=reading.readout_lr_scale(s.width), device=dev))
        return train(stack, data, cfg, lrs=[LR_A1[activation]], progress=False).models()[0]

    data1, (xt1, yt1) = _phase_data(old, s, dev)
    first = fit(None, data1, seed)
    act1, A1, c1 = _aligned(first, old.directions)
    spec1 = {int(j): int(c) for j, a, c in zip(act1, A1, c1) if a >= _A_SPECIALIZED}
    out = []
    for angle in angles:
        new = drifted_model(old, angle)
        data2, (xt2, yt2) = _phase_data(new, s, dev)
        cont = fit(first, data2, seed)
        scratch = fit(None, data2, seed + 1)  # another initialization: not phase 1's starting point
        act2, A2, c2 = _aligned(cont, new.directions)
        spec2 = {int(j): int(c) for j, a, c in zip(act2, A2, c2) if a >= _A_SPECIALIZED}
        _, A_old, _ = _aligned(cont, old.directions)
        _, A_s, _ = _aligned(scratch, new.directions)
        realigned = [j for j, c in spec2.items() if spec1.get(j) == c]
        W1, W2 = first.W.detach().double().cpu(), cont.W.detach().double().cpu()
        moved = [float(torch.nn.functional.cosine_similarity(W1[j], W2[j], dim=0)) for j in realigned]
        out.append({
            "angle": float(angle), "overlap": math.cos(math.radians(angle)), "steps": steps, "width": s.width,
            "phase1_test_old": float(mse(first, xt1, yt1)), "phase1_test_new": float(mse(first, xt2, yt2)),
            "continued_test": float(mse(cont, xt2, yt2)), "scratch_test": float(mse(scratch, xt2, yt2)),
            "spec_phase1": len(spec1), "active_phase1": int(len(act1)),
            "spec_phase2": len(spec2), "active_phase2": int(len(act2)),
            "still_old": int((A_old >= _A_SPECIALIZED).sum()), "spec_scratch": int((A_s >= _A_SPECIALIZED).sum()),
            "realigned": len(realigned), "recruited": sum(1 for j in spec2 if j not in spec1),
            "lost": sum(1 for j in spec1 if j not in spec2), "realigned_cosine": float(np.mean(moved)) if moved else None,
        })
    return out


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


def drift_answer(rows: list[dict[str, Any]]) -> str:
    """The question's answer in one line per angle: whether the phase-2 specialized neurons are
    mostly re-aligned or recruited, and whether phase 1 helps the drifted task."""
    out = []
    for r in rows:
        if r["spec_phase2"] == 0:
            out.append(f"{r['angle']:g} degrees: no neuron specialized on the new directions")
            continue
        which, ratio = _drift_verdict(r)
        out.append(f"{r['angle']:g} degrees: mostly {which}, phase 1 {'helps' if ratio < 1 else 'hurts'} "
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
            continue
        which, ratio = _drift_verdict(r)
        lines.append(f"{r['angle']:g} degrees: of the {total} specialized neurons {100 * r['realigned'] / total:.0f}% "
                     f"re-aligned, {100 * r['recruited'] / total:.0f}% recruited")
        lines.append(f"  -> mostly {which}")
        if r["realigned_cosine"] is not None:
            lines.append(f"  re-aligned neurons: cosine {r['realigned_cosine']:.2f} with their phase-1 weights "
                         f"(directions: {r['overlap']:.2f})")
        lines.append(f"  {r['still_old']} active neurons are still specialized on the old directions")
        lines.append(f"  continued / scratch test MSE {ratio:.2f}: phase 1 " + ("helps" if ratio < 1 else "hurts")
                     + " the drifted task")
    return "\n".join(lines)
