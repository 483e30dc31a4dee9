"""The readings of Figure 1 in page 03's words: the ablation's and the paper-scale run's answers
(:func:`ablation_verdict`, :func:`paper_scale_verdict`), the numbers the prose quotes
(:func:`paper_scale_numbers`), the width check's sentences (:func:`width_words`) and what the page
shows of each recorded run, in order (:func:`ablation_report`, :func:`paper_run_report`,
:func:`paper_scale_tables`, :func:`study_paper_report`, :func:`study_paper_text`)."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from ....profiles import Profile, get_profile
from ....specialization import PAPER_FIGURE1, PAPER_FIGURE1_WIDTH
from ....tables import count, span, thousands
from .base import BRANCH_NAMES, FIGURE1_READING, Reading, branch_means, minus_paper
from .readings_analysis import (_ordered, ablation_frame, ablation_scores, ablation_summary, importance_spread_frame,
                                paper_comparison_frame, rate_frame)
from .table import REPRODUCE_PP

__all__ = ["ablation_verdict", "paper_scale_verdict", "paper_scale_numbers", "width_words", "ablation_report", "paper_run_report",
           "paper_scale_tables", "study_paper_report", "study_paper_text"]


def ablation_verdict(result: dict) -> str:
    """The ablation's answer in words, computed from its scores: the closest reading overall, its
    margin over the default (the first reading), and whether any reading puts the ReGLU gate
    within :data:`~.table.REPRODUCE_PP` points of the paper on all three columns."""
    scores = ablation_scores(result)
    names = _ordered(scores)
    best = min(names, key=lambda n: scores[n]["mean_pp"])
    default = names[0]
    lines = [f"width {result['width']}: closest to the paper overall is {best!r},",
             f"  mean |difference| {scores[best]['mean_pp']:.1f} points over the six rows x three columns,",
             f"  largest {scores[best]['max_pp']:.1f}"]
    if best != default:
        per_seed = {n: [ablation_scores({"readings": {n: {"rows": [r for r in result["readings"][n]["rows"] if r["seed"] == s]}}})[n]["mean_pp"]
                        for s in result["seeds"]] for n in (best, default)}
        wins = sum(b < d for b, d in zip(per_seed[best], per_seed[default]))
        lines.append(f"  the default {default!r} is at {scores[default]['mean_pp']:.1f} points: "
                     f"{scores[default]['mean_pp'] - scores[best]['mean_pp']:.1f} points farther;")
        lines.append(f"  {best!r} is closer on {wins} of {len(result['seeds'])} seeds;")
        lines.append(f"  per seed, {best!r} vs the default:")
        lines.append("    " + ", ".join(f"{b:.1f} vs {d:.1f}" for b, d in zip(per_seed[best], per_seed[default])))
    gate_ok = []
    for name, rec in result["readings"].items():
        m = branch_means(rec["rows"]).get("reglu gate")
        if m is None:
            continue
        if max(abs(v) for v in minus_paper(m, PAPER_FIGURE1["reglu gate"])) <= REPRODUCE_PP:
            gate_ok.append(name)
    best_gate = min(names, key=lambda n: scores[n]["reglu_gate_pp"])
    lines.append(f"  ReGLU gate within {REPRODUCE_PP:.0f} points on all three columns: "
                 + (", ".join(repr(n) for n in gate_ok) if gate_ok else "no reading"))
    lines.append(f"  (closest on the gate: {best_gate!r}, mean {scores[best_gate]['reglu_gate_pp']:.1f} points)")
    return "\n".join(lines)


def paper_scale_verdict(recorded: dict, paper: dict | None = None) -> str:
    """The paper-scale run's answer in words, computed from its table: which of the six rows land
    within :data:`~.table.REPRODUCE_PP` points of the paper on all three columns (active share, % with
    A >= .71, % with A >= .90), which do not and by how much at most, and whether the ReGLU
    gate / value split (a strongly aligned gate over a weakly aligned value branch) appears."""
    paper = PAPER_FIGURE1 if paper is None else paper
    name = next(iter(recorded["readings"]))
    means = branch_means(recorded["readings"][name]["rows"])
    near, far = [], []
    for b, row in paper.items():
        if b not in means:
            continue
        worst = max(abs(v) for v in minus_paper(means[b], row))
        (near if worst <= REPRODUCE_PP else far).append((BRANCH_NAMES.get(b, b), worst))
    lines = [f"within {REPRODUCE_PP:.0f} points of the paper on all three columns: "
             + (", ".join(n for n, _ in near) if near else "no row")]
    lines += [f"farther: {n} (up to {w:.0f} points)" for n, w in far]
    if "reglu gate" in means and "reglu value" in means:
        g, v = means["reglu gate"], means["reglu value"]
        pg, pv = paper["reglu gate"], paper["reglu value"]
        lines.append("ReGLU gate minus value:")
        lines.append(f"  % with A >= .71: {g['A071_pct'] - v['A071_pct']:+.1f} points (the paper's {pg[1] - pv[1]:+.1f})")
        lines.append(f"  % with A >= .90: {g['A090_pct'] - v['A090_pct']:+.1f} points (the paper's {pg[2] - pv[2]:+.1f})")
    return "\n".join(lines)


def paper_scale_numbers(recorded: dict, paper: dict | None = None) -> dict[str, str]:
    """The numbers page 03's prose quotes about the paper-scale run, computed from its record and
    formatted for ``glue``: per branch ``"<b>"`` = "active / A ≥ .71 / A ≥ .90" (percent) and
    ``"<b> paper"`` the paper's; the ReGLU gate-minus-value gaps (``gap71``, ``gap90`` and the
    paper's); the rate validation picked (``relu_rate``), its validation MSE, that of 0.004 and their
    ratio; the ReLU cosine columns at the smallest and largest searched rate; the ReLU share of the
    width carrying 90 % and 99 % of the importance; the mean distance to the paper's table."""
    paper = PAPER_FIGURE1 if paper is None else paper
    entry = next(iter(recorded["readings"].values()))
    means = branch_means(entry["rows"])
    out = {}
    for b, (n_act, a71, a90) in paper.items():
        m = means[b]
        out[b] = f"{m['active_pct']:.1f} % / {m['A071_pct']:.1f} % / {m['A090_pct']:.1f} %"
        out[f"{b} paper"] = f"{100 * n_act / PAPER_FIGURE1_WIDTH:.1f} % / {a71:.1f} % / {a90:.1f} %"
    g, v = means["reglu gate"], means["reglu value"]
    pg, pv = paper["reglu gate"], paper["reglu value"]
    out |= {"gap71": f"{g['A071_pct'] - v['A071_pct']:+.1f}", "gap90": f"{g['A090_pct'] - v['A090_pct']:+.1f}",
            "gap71 paper": f"{pg[1] - pv[1]:+.1f}", "gap90 paper": f"{pg[2] - pv[2]:+.1f}"}
    rates = rate_frame(entry["relu_rates"])
    picked = rates[rates["selected"]].index[0]
    out |= {"relu_rate": f"{picked:g}", "relu_rate_val": f"{rates.loc[picked, 'val MSE']:.3g}",
            "val_0004": f"{rates.loc[0.004, 'val MSE']:.2g}" if 0.004 in rates.index else "not searched",
            "val_ratio_0004": f"{rates.loc[0.004, 'val MSE'] / rates.loc[picked, 'val MSE']:.1f}" if 0.004 in rates.index else "",
            "relu_low_rate": f"{rates.index.min():g}", "relu_high_rate": f"{rates.index.max():g}",
            "relu_low": f"{rates['A ≥ .71 %'].iloc[0]:.1f} % / {rates['A ≥ .90 %'].iloc[0]:.1f} %",
            "relu_high": f"{rates['A ≥ .71 %'].iloc[-1]:.1f} % / {rates['A ≥ .90 %'].iloc[-1]:.1f} %",
            "relu_active_range": span(rates["active %"], ".0f", " %"),
            "relu_active_paper": f"{100 * paper['relu'][0] / PAPER_FIGURE1_WIDTH:.1f} %"}
    spread = entry.get("importance_spread", {}).get("relu", {})
    if spread:
        out |= {"relu_spread90": f"{spread['0.9']:.0f} %", "relu_spread99": f"{spread['0.99']:.0f} %"}
    out["distance"] = f"{ablation_scores({'readings': {'r': entry}}, paper)['r']['mean_pp']:.1f}"
    return out


def _nearer(gain: float) -> str:
    """A gain in mean distance to the paper's table, in words."""
    return f"{abs(gain):.1f} points {'closer to' if gain > 0 else 'farther from'}"


def width_words(frame: pd.DataFrame, study: Sequence[Reading], widths: tuple[int, int]) -> str:
    """:func:`~.readings.width_check`'s sentences from its table (:func:`~.readings_analysis.width_frame`):
    one per study reading recorded at both widths, its gain (the balanced reading's distance minus
    its own) at each width, and what that says."""
    dist = {key: row["mean distance (points)"] for key, row in frame.iterrows()} if not frame.empty else {}
    paper = get_profile("paper").specialization
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
                    f"what else differs at the paper's scale (longer training, batch {thousands(paper.batch)}, the "
                    f"{len(paper.relu_lr_grid)}-rate ReLU search) "
                    "is not separated here")
        else:
            what = "the wider network loses most of its gain, so the width undoes it, at this training length already"
        lines.append(f"'{r.name}' is {_nearer(small)} the paper's table than '{FIGURE1_READING.name}' at width {widths[0]} "
                     f"and {_nearer(wide)} it at width {widths[1]}: {what}.")
    return " ".join(lines) or "The study's readings have not run at both widths under the cpu protocol yet."


def ablation_report(rec: dict | None, width: int) -> list[str | pd.DataFrame]:
    """What page 03 shows of the recorded readings ablation at ``width`` (``rec``: the record of
    :func:`reading_ablation` at the cpu profile's sizes, or ``None``): where and how long it ran,
    :func:`ablation_frame`, :func:`ablation_summary` and :func:`ablation_verdict`, in order."""
    if rec is None:
        return [f"width {width}: not recorded yet (python -m monosem readings --profile cpu --width {width} --record)\n"]
    res = rec["results"]
    return [f"recorded {rec['recorded']}, profile {rec['profile']!r}:\n"
            f"{rec['seconds'] / 60:.0f} min on a {rec['machine'].get('cpu_count')}-core CPU, one thread\n"
            f"width {width}, batch {res['batch']}, seeds {res['seeds']}: "
            f"active % / A ≥ .71 % / A ≥ .90 % (seed means; the paper's at width {thousands(PAPER_FIGURE1_WIDTH)})",
            ablation_frame(res), ablation_summary(res), ablation_verdict(res) + "\n"]


def paper_run_report(paper_run: dict | None, live_rows: list[dict], profile: Profile) -> list[str | pd.DataFrame]:
    """What page 03 shows of the recorded paper-scale run of :data:`~.base.FIGURE1_READING`
    (or ``None``): where and how long it ran, :func:`paper_comparison_frame` beside the live
    profile's rows (transposed: one column per branch) and :func:`paper_scale_verdict`."""
    if paper_run is None:
        return ["not recorded yet: python -m monosem readings --profile paper --readings balanced --record"]
    res, mach = paper_run["results"], paper_run["machine"]
    return [f"recorded {paper_run['recorded']}: {paper_run['seconds'] / 3600:.1f} h on {count(mach['torch_threads'], 'thread') if mach.get('torch_threads') else 'unrecorded threads'}\n"
            f"of a {mach.get('cpu_count')}-core CPU (accelerator: {mach.get('accelerator') or 'none'}, torch {mach.get('torch')})\n"
            f"live column: this page's profile {profile.name!r}, width {profile.specialization.width}",
            paper_comparison_frame(res, live_rows=live_rows).T, paper_scale_verdict(res)]


def paper_scale_tables(paper_run: dict | None) -> list[str | pd.DataFrame]:
    """The paper-scale run's further tables, each after its title: the ReLU table at every rate of
    the search (:func:`rate_frame`) and the spread of the importance
    (:func:`importance_spread_frame`), where recorded."""
    if paper_run is None:
        return []
    entry = next(iter(paper_run["results"]["readings"].values()))
    out: list[str | pd.DataFrame] = []
    if "relu_rates" in entry:
        out += ["the six-rate ReLU search at the paper's scale, every candidate:", rate_frame(entry["relu_rates"])]
    if "importance_spread" in entry:
        out += ["how concentrated the importance I_j is:", importance_spread_frame(entry["importance_spread"])]
    return out


def study_paper_report(records: dict[str, dict | None]) -> list[str | pd.DataFrame]:
    """What page 03 shows of :func:`study_paper_records`: per reading, when and how long it ran,
    :func:`paper_comparison_frame` (transposed) and :func:`paper_scale_verdict`, or how to run it."""
    out: list[str | pd.DataFrame] = []
    for name, rec in records.items():
        if rec is None:
            out.append(f"{name!r} at the paper's scale: not recorded yet (python -m monosem readings --profile paper "
                       f"--readings {name!r} --record)")
        else:
            out += [f"{name!r} at the paper's scale, recorded {rec['recorded']} ({rec['seconds'] / 3600:.1f} h):",
                    paper_comparison_frame(rec["results"]).T, paper_scale_verdict(rec["results"])]
    return out


def study_paper_text(paper_run: dict | None, records: dict[str, dict | None]) -> str:
    """Page 03's sentence on the study's best readings at the paper's scale: each recorded one's
    mean distance to the paper's table against the balanced reading's, and its ReLU row against the
    paper's (:func:`paper_scale_numbers`)."""
    balanced = paper_scale_numbers(paper_run["results"]) if paper_run is not None else None
    parts = []
    for name, rec in records.items():
        if rec is not None and balanced is not None:
            num = paper_scale_numbers(rec["results"])
            parts.append(f"'{name}' is {num['distance']} points from the paper's table on average (the balanced reading: "
                         f"{balanced['distance']}); its ReLU row is {num['relu']} against the paper's {num['relu paper']} "
                         f"(active share / A ≥ .71 / A ≥ .90)")
    return "At the paper's scale, " + "; ".join(parts) + "." if parts else "No reading of the study has run at the paper's scale yet."
