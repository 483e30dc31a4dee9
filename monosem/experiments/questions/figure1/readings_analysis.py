"""The readings of Figure 1 read as tables: the ReLU table at every rate of the search
(:func:`rate_frame`), the importance spread (:func:`importance_spread_frame`), the paper-scale run
beside the paper (:func:`paper_comparison_frame`), each reading's distance to the paper's table
(:func:`ablation_scores`, :func:`ablation_frame`, :func:`ablation_summary`) and the width check's
table (:func:`width_frame`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ....specialization import PAPER_FIGURE1, PAPER_FIGURE1_WIDTH
from .base import BRANCH_NAMES, READINGS, branch_means, minus_paper

__all__ = ["rate_frame", "importance_spread_frame", "paper_comparison_frame", "ablation_scores", "ablation_frame", "ablation_summary",
           "width_frame"]


def rate_frame(rows: list[dict]) -> pd.DataFrame:
    """:func:`rate_rows` as a table, one row per rate of the search (seed means): validation and
    test MSE, active share and the two cosine columns (percent), and whether validation picked it."""
    df = pd.DataFrame(rows)
    df["active %"] = 100 * df["n_active"] / df["width"]
    df["A ≥ .71 %"], df["A ≥ .90 %"] = 100 * df["frac_A071"], 100 * df["frac_A090"]
    out = df.groupby("lr").agg(**{"val MSE": ("val_mse", "mean"), "test MSE": ("test_mse", "mean"), "active %": ("active %", "mean"),
                                  "A ≥ .71 %": ("A ≥ .71 %", "mean"), "A ≥ .90 %": ("A ≥ .90 %", "mean"), "selected": ("selected", "any")})
    out.index.name = "ReLU rate"
    return out


def importance_spread_frame(spread: dict[str, dict[str, float]]) -> pd.DataFrame:
    """:func:`importance_spread` as a table: one row per activation, one column per share of the
    importance, the % of the width carrying it."""
    df = pd.DataFrame(spread).T
    df.columns = [f"% of width carrying {float(c) * 100:g} %" for c in df.columns]
    df.index.name = "activation"
    return df


def paper_comparison_frame(recorded: dict, live_rows: list[dict] | None = None, paper: dict | None = None) -> pd.DataFrame:
    """Figure 1 at the paper's scale (a recorded :func:`reading_ablation` of one reading at the
    ``paper`` sizes) beside the paper's table and, when given, the live profile's rows: one row per
    branch, the active share and the two cosine columns (percent) of each, and the recorded run's
    differences from the paper (percentage points)."""
    paper = PAPER_FIGURE1 if paper is None else paper
    name = next(iter(recorded["readings"]))
    rec = branch_means(recorded["readings"][name]["rows"])
    live = branch_means(live_rows) if live_rows else {}
    out = []
    for b, (n_act, a71, a90) in paper.items():
        if b not in rec:
            continue
        m = rec[b]
        row = {"branch": BRANCH_NAMES.get(b, b), "paper active %": 100 * n_act / PAPER_FIGURE1_WIDTH, "paper A ≥ .71 %": a71, "paper A ≥ .90 %": a90,
               "recorded active %": m["active_pct"], "recorded A ≥ .71 %": m["A071_pct"], "recorded A ≥ .90 %": m["A090_pct"]}
        d = minus_paper(m, paper[b])
        row |= {"minus paper: active": d[0], "minus paper: A ≥ .71": d[1], "minus paper: A ≥ .90": d[2]}
        if b in live:
            row |= {"live active %": live[b]["active_pct"], "live A ≥ .71 %": live[b]["A071_pct"], "live A ≥ .90 %": live[b]["A090_pct"]}
        out.append(row)
    return pd.DataFrame(out).set_index("branch")


def _ordered(readings) -> list[str]:
    """Reading names in :data:`~.base.READINGS` order (the default first), others after: a recorded
    result read back from JSON may hold them in another order."""
    known = [r.name for r in READINGS if r.name in readings]
    return known + [n for n in readings if n not in known]


def ablation_scores(result: dict, paper: dict | None = None) -> dict[str, dict[str, float]]:
    """How far each reading's table is from the paper's: over the six branches and the three
    columns the paper prints legibly (active share of 2 048 neurons, % with A >= .71, % with
    A >= .90), the mean and the largest absolute difference in percentage points, and the ReGLU
    gate's own mean difference. Smaller is closer."""
    paper = PAPER_FIGURE1 if paper is None else paper
    scores = {}
    for name, rec in result["readings"].items():
        means = branch_means(rec["rows"])
        diffs, gate = [], []
        for branch, row in paper.items():
            if branch not in means:
                continue
            d = [abs(v) for v in minus_paper(means[branch], row)]
            diffs += d
            if branch == "reglu gate":
                gate = d
        scores[name] = {"mean_pp": sum(diffs) / len(diffs), "max_pp": max(diffs),
                        "reglu_gate_pp": sum(gate) / len(gate) if gate else float("nan")}
    return scores


def ablation_frame(result: dict, paper: dict | None = None) -> pd.DataFrame:
    """The readings ablation as a table: one row per branch, the paper's and each reading's
    "active / A ≥ .71 / A ≥ .90" (percent, seed means)."""
    paper = PAPER_FIGURE1 if paper is None else paper
    names = _ordered(result["readings"])
    means = {n: branch_means(result["readings"][n]["rows"]) for n in names}
    cell = lambda m: f"{m['active_pct']:.0f} / {m['A071_pct']:.0f} / {m['A090_pct']:.0f}"  # noqa: E731
    out = []
    for b, (n_act, a71, a90) in paper.items():
        row = {"branch": BRANCH_NAMES.get(b, b), "paper": f"{100 * n_act / PAPER_FIGURE1_WIDTH:.0f} / {a71:.0f} / {a90:.0f}"}
        row |= {n: cell(means[n][b]) if b in means[n] else "" for n in names}
        out.append(row)
    return pd.DataFrame(out).set_index("branch")


def ablation_summary(result: dict, paper: dict | None = None) -> pd.DataFrame:
    """Per reading: its distance to the paper's table (mean and largest, points; :func:`ablation_scores`),
    the test MSE of each activation (seed means) and the training time in minutes."""
    scores = ablation_scores(result, paper)
    out = []
    for n in _ordered(result["readings"]):
        rec = result["readings"][n]
        means = branch_means(rec["rows"])
        row = {"reading": n, "mean distance (points)": scores[n]["mean_pp"], "largest (points)": scores[n]["max_pp"]}
        row |= {f"{b} test MSE": v["test_mse"] for b, v in means.items() if not b.endswith("value")}
        row["minutes"] = rec["seconds"] / 60
        out.append(row)
    return pd.DataFrame(out).set_index("reading")


def width_frame(recs: dict[int, dict[str, Any] | None]) -> pd.DataFrame:
    """:func:`~.readings.width_check`'s table from the recorded readings at each width
    (:func:`~.readings.recorded_readings`, ``None`` where none is recorded): per reading and
    width, the ReLU network's active share and % with A >= .71, the ReGLU gate's and value
    branch's % with A >= .71 (seed means) and the mean distance to the paper's table
    (:func:`ablation_scores`)."""
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
    return pd.DataFrame(rows).set_index(["reading", "width"]) if rows else pd.DataFrame()
