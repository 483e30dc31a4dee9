"""Section 3.1's question as page 03 asks it live: do the four networks of Figure 1 develop
specialized first-layer neurons, and how does their table compare with the paper's?

The live runs train the four networks under :data:`~.base.FIGURE1_READING` at the page's profile
(:func:`~.base.train_figure1`, Appendix A.1). Here: what page 03 shows of them (the table beside
the paper's, the test MSEs, the ReLU rate search, the drawn neurons, the timing), the verdict rule
on a row of the paper's Figure 1 (:func:`figure1_row_status`), the numbers and verdicts of the
page's closing remarks, and the page's cost. The initialization ablations are :mod:`.lazy` (live)
and :mod:`.readings` (recorded, with the paper-scale runs); the sensitivity study is :mod:`.study`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch

from ....data import figure1_model
from ....models import ACTIVATIONS, MLP
from ....profiles import Profile, SpecializationSizes, get_profile
from ....specialization import PAPER_FIGURE1, PAPER_FIGURE1_WIDTH, alignment, dominance, top_aligned
from ....tables import count, span, thousands
from ...estimate import DeviceModel, mlp_update_seconds
from ...registry import register_cost
from ...verdicts import Part, against_note
from .claim_readings import PRIMARY, readings_of
from .base import BRANCH_NAMES, FIGURE1_READING, Figure1Run, branch_means, neuron_panels
from .lazy import ScaledRun, regime_numbers

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ...verdicts import Claim

__all__ = ["PAGE", "REPRODUCE_PP", "paper_profile_estimate", "figure1_frame", "figure1_part", "figure1_row_status", "figure1_claims",
           "live_numbers", "sizes_text", "test_mse_frame", "relu_search_frame", "table_note", "gelu_neurons_figure",
           "moderate_neurons_figure", "timing_frame", "paper_profile_text", "page_numbers", "page_claims", "page_cost"]

#: the page whose verdicts :func:`page_claims` gives
PAGE = "03_specialization"

#: a reading "reproduces" a column of the paper's table when it lands within this many points
REPRODUCE_PP = 10.0


def paper_profile_estimate(model_steps_per_second: dict[str, float], width: int, batch: int) -> dict[str, float]:
    """Hours of the paper profile (Appendix A.1: every ReLU rate of the search at its step count,
    GELU/ReGLU/SwiGLU once each, at the paper's width and batch) on this machine, extrapolated
    from measured model-steps per second at ``width`` x ``batch``, assuming cost proportional to
    width x batch (the matmuls dominate). Returns hours per activation and ``"total"``."""
    paper = get_profile("paper").specialization
    scale = (paper.width * paper.batch) / (width * batch)
    steps = {"relu": len(paper.relu_lr_grid) * paper.max_steps_relu} | {a: paper.max_steps_other for a in _OTHERS}
    out = {a: steps[a] * scale / model_steps_per_second[a] / 3600 for a in steps if a in model_steps_per_second}
    out["total"] = sum(out.values())
    return out


#: Figure 1's activations other than ReLU: one run each, no rate search (Appendix A.1)
_OTHERS = tuple(a for a in ACTIVATIONS if a != "relu")


def figure1_frame(rows: list[dict], paper: dict | None = None, *, test_mse: bool = True) -> pd.DataFrame:
    """The Figure 1 table of :func:`~.base.table_rows` as a DataFrame, one row per branch: the active share
    of the width and the four fractions as "mean ± half the seed range" (percent), the paper's
    three legible columns beside them and, with ``test_mse``, the seeds' test MSEs."""
    paper = PAPER_FIGURE1 if paper is None else paper

    def spread(values) -> str:
        v = 100 * np.asarray(values, dtype=float)
        return f"{v.mean():.1f} ± {(v.max() - v.min()) / 2:.1f}"

    out = []
    for branch in dict.fromkeys(r["branch"] for r in rows):
        mine = [r for r in rows if r["branch"] == branch]
        row = {"branch": BRANCH_NAMES.get(branch, branch),
               "active %": spread([r["n_active"] / r["width"] for r in mine]),
               "A ≥ .71 %": spread([r["frac_A071"] for r in mine]), "A ≥ .90 %": spread([r["frac_A090"] for r in mine]),
               "D > 1 %": spread([r["frac_D1"] for r in mine]), "D > 2 %": spread([r["frac_D2"] for r in mine])}
        p = paper.get(branch)
        row["paper: active / A ≥ .71 / A ≥ .90 %"] = f"{100 * p[0] / PAPER_FIGURE1_WIDTH:.1f} / {p[1]:.1f} / {p[2]:.1f}" if p else ""
        if test_mse:
            row["test MSE"] = " / ".join(f"{r['test_mse']:.3g}" for r in mine)
        out.append(row)
    return pd.DataFrame(out)


def figure1_part(rows: list[dict], paper_row: tuple[float, float, float]):
    """One row of the paper's Figure 1 as a :class:`~...verdicts.Part`: the statistic is the larger
    distance (points) of the two cosine columns (% of the active neurons with A >= .71 and with
    A >= .90) from the paper's, on the seed means and seed by seed; it holds within
    :data:`REPRODUCE_PP` points."""
    def miss(rs) -> float:
        return max(abs(100 * float(np.mean([r["frac_A071"] for r in rs])) - paper_row[1]),
                   abs(100 * float(np.mean([r["frac_A090"] for r in rs])) - paper_row[2]))

    return Part("largest miss of the two cosine columns (points)", miss(rows) if rows else None,
                tuple(miss([r]) for r in rows), high=REPRODUCE_PP, closed=True)


def figure1_row_status(rows: list[dict], paper_row: tuple[float, float, float]) -> tuple[str, str]:
    """Whether one row of the paper's Figure 1 reproduces, and the numbers behind the answer.

    The row holds where both cosine columns (% of the active neurons with A >= .71 and with
    A >= .90) lie within :data:`REPRODUCE_PP` points of the paper's (:func:`figure1_part`); the
    seeds are the runs of the book's one rule (:func:`~...verdicts.judge`): it **reproduces** when
    the seed means hold and at least 4 of 5 seeds do, is **indicated** on fewer seeds, and so on.
    The active share is left out: it depends on the width, which the reduced profiles change.

    ``rows`` are one branch's rows of :func:`~.base.table_rows` (one per seed); returns
    ``(status, evidence)``.
    """
    if not rows:
        return "not computed", "no run"
    part = figure1_part(rows, paper_row)
    a71 = 100 * float(np.mean([r["frac_A071"] for r in rows]))
    a90 = 100 * float(np.mean([r["frac_A090"] for r in rows]))
    d71, d90 = a71 - paper_row[1], a90 - paper_row[2]
    n = len(rows)
    within = sum(part.holds(v) for v in part.values)
    evidence = (f"{a71:.1f} % / {a90:.1f} % ({d71:+.1f} / {d90:+.1f} points); {within} of "
                f"{count(n, 'seed')} within {REPRODUCE_PP:.0f}"
                + against_note(part.holds(part.mean), [part.holds(v) for v in part.values], "seed"))
    return part.status, evidence


def figure1_claims(rows: list[dict], page: str, profile: str, width: int, batch: int, n: int, paper: dict | None = None,
                   detail: str = "") -> list:
    """One :class:`~monosem.experiments.verdicts.Claim` per row of the paper's Figure 1, judged on
    ``rows`` (:func:`~.base.table_rows`, or a recorded run's rows) by :func:`figure1_row_status`, at the
    scale ``profile``, ``width``, ``batch``, ``n`` (training size) and ``detail``; each carries the
    claim's other readings (:mod:`.claim_readings`)."""
    from ...verdicts import Claim

    paper = PAPER_FIGURE1 if paper is None else paper
    model = figure1_model()
    out = []
    for branch, row in paper.items():
        mine = [r for r in rows if r["branch"] == branch]
        _, evidence = figure1_row_status(mine, row)
        claim = f"Figure 1, {BRANCH_NAMES.get(branch, branch)}: {row[1]:.1f} % / {row[2]:.1f} % of active neurons with A ≥ 0.71 / 0.90"
        judged = Claim.judged(page, claim, [figure1_part(mine, row)], evidence, profile=profile, width=width, batch=batch,
                              n=n, unit="seed", detail=detail)
        readings = readings_of(mine, model.d, model.K)
        out.append(dataclasses.replace(judged, reading=PRIMARY, readings=tuple(readings)) if readings else judged)
    return out


def live_numbers(rows: list[dict], paper: dict | None = None) -> dict[str, str]:
    """The numbers page 03's remarks quote about a live table (:func:`~.base.table_rows`), for ``glue``:
    per branch "A ≥ .71 / A ≥ .90 % (seed means) against the paper's", the range of the active
    share over branches, and the largest half seed-range of the cosine columns (ReLU apart)."""
    paper = PAPER_FIGURE1 if paper is None else paper
    means = branch_means(rows)
    out = {}
    half = {"relu": 0.0, "gated": 0.0}
    for b, (_, a71, a90) in paper.items():
        if b not in means:
            continue
        m = means[b]
        out[b] = f"{m['A071_pct']:.1f} % / {m['A090_pct']:.1f} % (paper {a71:.1f} % / {a90:.1f} %)"
        mine = [r for r in rows if r["branch"] == b]
        for key in ("frac_A071", "frac_A090"):
            v = [100 * r[key] for r in mine]
            group = "relu" if b == "relu" else "gated"
            half[group] = max(half[group], (max(v) - min(v)) / 2)
    active = [m["active_pct"] for m in means.values()]
    out["active_range"] = span(active, ".0f", " %")
    ungelu = [100 * paper[b][0] / PAPER_FIGURE1_WIDTH for b in paper if b != "gelu"]
    out["paper_active"] = (f"{span(ungelu, '.0f', ' %')} for ReLU, ReGLU and SwiGLU and "
                           f"{100 * paper['gelu'][0] / PAPER_FIGURE1_WIDTH:.0f} % for GELU")
    out["halfrange_relu"], out["halfrange_gated"] = f"{half['relu']:.1f}", f"{half['gated']:.1f}"
    return out


def sizes_text(sizes: SpecializationSizes) -> str:
    """The line page 03 prints about its Figure 1 sizes: width, training set, batch, steps, seeds."""
    return (f"width {sizes.width}, n_train {sizes.n_train}, batch {sizes.batch}, "
            f"steps ReLU {sizes.max_steps_relu} / others {sizes.max_steps_other}, seeds {sizes.seeds}")


def test_mse_frame(runs: dict[str, Figure1Run]) -> pd.DataFrame:
    """Per activation and seed (the index), the selected network's initial learning rate, best
    checkpoint step and test MSE (Appendix A.1's validation-selected checkpoint)."""
    rows = [{"activation": act, "seed": sd, "initial rate": lr, "best step": st, "test MSE": e}
            for act, run in runs.items() for sd, lr, st, e in zip(run.seeds, run.lrs, run.best_step, run.test_mse)]
    return pd.DataFrame(rows).set_index(["activation", "seed"])


def relu_search_frame(run: Figure1Run) -> pd.DataFrame:
    """The ReLU learning-rate search: the validation MSE of every rate (columns) and seed (rows)."""
    return pd.DataFrame(run.grid_val_mse, index=pd.Index(run.seeds, name="seed")).rename_axis(columns="ReLU rate")


def table_note(profile: Profile) -> str:
    """The lines printed above the live Figure 1 table: the reduced scale against the paper's
    sizes (Appendix A.1) where it applies, then the width and the number of seeds."""
    sizes = profile.specialization
    lines = []
    if profile.reduced_scale:
        paper = get_profile("paper").specialization
        lines.append(f"{profile.name} profile: reduced scale (width {sizes.width}, batch {sizes.batch}, {thousands(sizes.max_steps_relu)} / "
                     f"{thousands(sizes.max_steps_other)} steps);\nthe paper uses width {thousands(paper.width)}, batch "
                     f"{thousands(paper.batch)}, {thousands(paper.max_steps_relu)} / {thousands(paper.max_steps_other)} steps.")
    lines.append(f"width {thousands(sizes.width)}, {count(len(sizes.seeds), 'seed')}; mean ± half-range over seeds, in percent")
    return "\n".join(lines)


def gelu_neurons_figure(net: MLP, k: int = 4) -> Figure | None:
    """Figure 1 (bottom): the ``k`` highest-importance active neurons of a GELU network with
    A_j >= 0.90, one panel each, or ``None`` when no active neuron is that aligned."""
    directions = figure1_model().directions
    top = top_aligned(net, directions, k=k, min_A=0.90)
    if len(top) == 0:
        return None
    A, c = alignment(net.W.detach()[top], directions)
    titles = [f"neuron {int(j)}: A={a:.2f}, c={int(ci) + 1}" for j, a, ci in zip(top, A, c)]
    return neuron_panels(net.W.detach()[top], titles, "Highest-importance active GELU neurons with $A_j \\geq 0.90$",
                         xlabel="coordinate", sharey=True)


def moderate_neurons_figure(runs: dict[str, Figure1Run], k: int = 4) -> Figure | None:
    """Figure 5: the highest-importance active neurons of the first seed's GELU, then ReLU,
    network with a moderate cosine 0.4 <= A_j < 0.71 and a dominant coordinate D_j > 2 (``k`` in
    all), or ``None`` when there is none."""
    directions = figure1_model().directions
    shown = []
    for act in ("gelu", "relu"):
        net = runs[act].models[0]
        shown += [(act, int(j), net.W.detach()[j]) for j in top_aligned(net, directions, k=k, min_A=0.4, max_A=0.7099, min_D=2.0)]
    shown = shown[:k]
    if not shown:
        return None
    W = torch.stack([w for _, _, w in shown])
    A, _ = alignment(W, directions)
    D = dominance(W, directions)
    titles = [f"{a} {j}: A={x:.2f}, D={y:.1f}" for (a, j, _), x, y in zip(shown, A, D)]
    return neuron_panels(W, titles, "Moderate cosine alignment, clearly dominant predictive coordinate")


def timing_frame(runs: dict[str, Figure1Run]) -> pd.DataFrame:
    """Per activation: the networks trained in one stack, the steps, the wall seconds and the
    model-steps per second (steps per second times the stack's size)."""
    return pd.DataFrame({"networks in the stack": {a: r.n_stacked for a, r in runs.items()}, "steps": {a: r.steps for a, r in runs.items()},
                         "seconds": {a: r.seconds for a, r in runs.items()},
                         "model-steps per second": {a: r.steps_per_second * r.n_stacked for a, r in runs.items()}})


def paper_profile_text(runs: dict[str, Figure1Run], sizes: SpecializationSizes) -> str:
    """The paper profile's estimated hours on this machine (:func:`paper_profile_estimate`, from
    the throughput of ``runs``), as page 03 prints it."""
    est = paper_profile_estimate({a: r.steps_per_second * r.n_stacked for a, r in runs.items()}, sizes.width, sizes.batch)
    paper = get_profile("paper").specialization
    return (f"paper profile (width {thousands(paper.width)}, batch {thousands(paper.batch)}, {len(paper.relu_lr_grid)} x "
            f"{thousands(paper.max_steps_relu)} ReLU + {len(_OTHERS)} x {thousands(paper.max_steps_other)} steps)\n"
            f"on this machine: about {est['total']:.2g} h")


# --- page 03's closing numbers and verdicts -----------------------------------------------------


def page_numbers(profile: Profile, live_rows: list[dict], ablation: list[ScaledRun], paper_run: dict | None) -> dict[str, str]:
    """Every number page 03's closing remarks quote, by glue name: the verdict's threshold, the
    live profile's sizes and :func:`live_numbers` (``live_*``), the lazy ablation's ReLU networks
    (:func:`.lazy.regime_numbers`) and the recorded paper-scale run's hours."""
    sizes = profile.specialization
    out = {"reproduce_pp": f"{REPRODUCE_PP:.0f}", "live_profile": profile.name, "live_width": f"{sizes.width}",
           "live_batch": f"{sizes.batch}", "live_steps": f"{sizes.max_steps_relu} (ReLU) / {sizes.max_steps_other}",
           "live_n_rates": count(len(sizes.relu_lr_grid), "ReLU rate")}
    out |= {"live_" + key.replace(" ", "_"): value for key, value in live_numbers(live_rows).items()}
    out |= regime_numbers(ablation)
    out["paper_hours"] = f"{paper_run['seconds'] / 3600:.1f}" if paper_run is not None else "(not recorded)"
    return out


def page_claims(profile: Profile, live_rows: list[dict], paper_run: dict | None, records: dict[str, dict | None]) -> list[Claim]:
    """Page 03's verdicts on the rows of the paper's Figure 1 (:func:`figure1_claims`): on the live
    table, on the recorded paper-scale run and on each recorded study reading at the paper's scale
    (the paper profile's training size; width and batch as recorded)."""
    sizes = profile.specialization
    claims = figure1_claims(live_rows, PAGE, profile.name, sizes.width, sizes.batch, sizes.n_train)
    recorded = [(FIGURE1_READING.name, paper_run)] + list(records.items())
    paper_n = get_profile("paper").specialization.n_train
    for name, rec in recorded:
        if rec is not None:
            res = rec["results"]
            claims += figure1_claims(next(iter(res["readings"].values()))["rows"], PAGE, "paper (recorded)", res["width"],
                                     res.get("batch", "not recorded"), paper_n, detail=f"reading {name!r}")
    return claims


def page_cost(P: Profile, device: DeviceModel) -> dict[str, float]:
    """Page 03's heavy work (:mod:`~...estimate`): one stack per activation (its learning rates x
    seeds train together) for Figure 1, and the ablations' networks."""
    s = P.specialization
    d = figure1_model().d
    steps = {"relu": s.max_steps_relu, "gelu": s.max_steps_other, "reglu": s.max_steps_other, "swiglu": s.max_steps_other}
    rates = {a: (len(s.relu_lr_grid) if a == "relu" else 1) for a in steps}
    main = sum(steps[a] * mlp_update_seconds(s.width, s.batch, d, a, device, rates[a] * len(s.seeds)) for a in steps)
    ablation = sum(steps[a] * mlp_update_seconds(s.width, s.batch, d, a, device, rates[a])
                   for a in s.ablation_activations for _ in s.lazy_output_scales)
    ablation += sum(steps[a] * mlp_update_seconds(s.width, s.batch, d, a, device, rates[a]) for a in s.small_init_activations)
    return {"networks (Figure 1)": main, "networks (ablations)": ablation}


register_cost(PAGE, page_cost)
