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
the page reads. Figure 1 runs recorded in one named file per run are found through
:data:`monosem.experiments.legacy.NAMED_RECORDS`. Here too: what page 03 shows of these records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd
import torch

from ....data import figure1_model
from ....device import get_device
from ....profiles import Profile, SpecializationSizes, get_profile
from ....specialization import PAPER_FIGURE1, PAPER_FIGURE1_WIDTH, active_set, importance, specialization_table, top_aligned
from ....tables import count, span, thousands
from ....train import STEP_REVISION, STEP_REVISIONS
from ...cache import EARLIER_SECONDS, Job, ResultCache
from ...recorded import load_recorded_cells
from ...registry import register_method, register_rows
from ...sweeps import Figure, register_figure
from .base import (BRANCH_NAMES, FIGURE1_READING, READINGS, STUDY_READINGS, Figure1Run, Reading, branch_means, figure1_data,
                   minus_paper, neuron_panels, table_row, table_rows, train_figure1)
from .table import REPRODUCE_PP

if TYPE_CHECKING:
    from matplotlib.figure import Figure as PlotFigure

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


#: shares of the total importance at which :func:`importance_spread` counts the neurons needed
SPREAD_FRACTIONS = (0.5, 0.9, 0.99, 0.999)


def importance_spread_frame(spread: dict[str, dict[str, float]]) -> pd.DataFrame:
    """:func:`importance_spread` as a table: one row per activation, one column per share of the
    importance, the % of the width carrying it."""
    df = pd.DataFrame(spread).T
    df.columns = [f"% of width carrying {float(c) * 100:g} %" for c in df.columns]
    df.index.name = "activation"
    return df


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

# --- the readings as cells of the result store ------------------------------------------------

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


def _nearer(gain: float) -> str:
    """A gain in mean distance to the paper's table, in words."""
    return f"{abs(gain):.1f} points {'closer to' if gain > 0 else 'farther from'}"


def width_check(study: Sequence[Reading] = STUDY_READINGS, widths: tuple[int, int] = (512, 2048)) -> tuple[pd.DataFrame, str]:
    """Does a study reading's gain over the balanced reading survive a wider network? Under the
    cpu profile's protocol (its updates, batch, ReLU rate grid and seeds; only the width changes),
    per reading and width: the ReLU network's active share and % with A >= .71 and the ReGLU
    gate's and value branch's % with A >= .71 (seed means; the value scale moves only the gated
    networks), and the mean distance to the paper's table
    (:func:`ablation_scores`); and one sentence per study reading recorded at both widths:
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
    return frame, " ".join(lines) or "The study's readings have not run at both widths under the cpu protocol yet."


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

# --- page 03's recorded cells and its closing numbers --------------------------------------------


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


def drawn_neuron_figures(recorded: dict) -> list[PlotFigure]:
    """The neurons a recorded run drew (:func:`figure_neurons`): Figure 1 (bottom) and Figure 5 at
    its scale, one figure each where some neuron qualified."""
    drawn = next(iter(recorded["readings"].values()))["neurons"]
    out = []
    for part, title in (("figure1", "GELU neurons with $A_j \\geq 0.90$ (paper scale)"),
                        ("figure5", "moderate $A_j$, dominant coordinate (paper scale)")):
        if drawn[part]:
            W = torch.tensor([n["w"] for n in drawn[part]])
            out.append(neuron_panels(W, [f"{n['activation']} {n['neuron']}" for n in drawn[part]], title))
    return out


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
