"""The sensitivity study read as tables: every network (:func:`study_frame`), those the Figure 1
table would show (:func:`selected_frame`), the paper's fingerprints (:func:`fingerprints`), each
setting's distance to the paper's table (:func:`paper_distance`, :func:`ranking`), what each factor
moves (:data:`FACTORS`, :func:`factor_effects`) and the two hypotheses' tables
(:func:`dead_neurons`, :func:`gate_value_split`)."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from ....specialization import PAPER_FIGURE1, PAPER_FIGURE1_WIDTH
from ....train import LR_A1
from .table import REPRODUCE_PP

__all__ = ["WITHIN_PP", "WITHIN", "REACH_CELLS", "MOVE_PP", "study_frame", "selected_frame", "fingerprints", "paper_distance", "FACTORS",
           "BRANCHES", "setting_means", "factor_effects", "ranking", "dead_neurons", "gate_value_split"]

#: a cosine cell (a branch's % A >= .71 or % A >= .90) counts as the paper's within this many
#: points: Figure 1's tolerance
WITHIN_PP = REPRODUCE_PP
#: the ranking's column of how many cosine cells lie within :data:`WITHIN_PP`
WITHIN = f"cosine cells within {WITHIN_PP:g}"
#: the cosine cells a setting must bring within :data:`WITHIN_PP` to reach the paper's table
REACH_CELLS = 10
#: a hypothesis moves a gap toward the paper only by more than this many points
MOVE_PP = 5.0


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
