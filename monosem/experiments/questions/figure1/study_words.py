"""The sensitivity study in page 03's words: the sentences about its two hypotheses, the paper's
fingerprints and its answer, each with the numbers that show it (:func:`study_numbers`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ....profiles import get_profile
from ....specialization import PAPER_FIGURE1, PAPER_FIGURE1_WIDTH
from ....tables import count, span, thousands
from ....train import A1_RELU_BEST_STEP, LR_A1
from .study_analysis import (FACTORS, MOVE_PP, REACH_CELLS, WITHIN, WITHIN_PP, dead_neurons, factor_effects, fingerprints,
                             gate_value_split, paper_distance, selected_frame)
from .study_settings import STUDY_BASE, STUDY_SEEDS

__all__ = ["study_numbers", "paper_best_step_share"]


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
