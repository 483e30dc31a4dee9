"""Page 10, question 3: **an explicit mixture of experts at matched compute.** The sweep ``moe``
(declared here) trains a top-1 mixture of E = K ReLU experts (a linear router, Switch
Transformer routing and load-balancing loss: Fedus, Zoph & Shazeer 2022; sparsely gated experts,
Shazeer et al. 2017) beside dense ReLU and ReGLU networks with its parameter count and,
separately, with its forward FLOPs per example, on Figure 2's data and protocol; the router's
partition is scored against the true clusters (ARI).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import NullLocator

from ... import plots
from ...data import LABEL_NOISE_VARIANCE
from ...models import forward_flops, matched_dense_width, parameter_count
from ...tables import percent
from ...profiles import Profile, get_profile
from ..cache import Job
from ..specs import MIXED_LINK_D
from ..estimate import DeviceModel, mlp_update_seconds, moe_update_seconds
from ..families.mixtures import MIXTURES, MOE_MATCHES, MOE_RELU, moe_dense_widths, moe_expert_width, moe_sizes
from ..families.networks import MLP_REGLU, MLP_RELU, NETWORKS, network_method
from ..registry import register_cost, register_plot
from ..sweeps import Figure, data_spec, figure_of, method_spec, register_figure
from ._tables import frame

__all__ = ["moe_jobs", "MOE_TIE_BAND", "moe_rows", "moe_frame", "moe_accounting", "moe_findings", "moe_answer", "plot_moe", "plot_moe_figure"]

#: the dense networks of the mixture-of-experts table: (activation, match) -> label (=params: with the
#: mixture's parameter count, =FLOPs: with its forward FLOPs per example)
_MOE_DENSE = {("relu", "params"): "ReLU =params", ("reglu", "params"): "ReGLU =params",
              ("relu", "flops"): "ReLU =FLOPs", ("reglu", "flops"): "ReGLU =FLOPs"}
_MOE_ACT = {"relu": "ReLU", "reglu": "ReGLU"}


def moe_jobs(P: Profile) -> list[Job]:
    """The mixture-of-experts grid: per K, the mixture (E = K experts of width
    :func:`~..families.mixtures.moe_expert_width`) and every dense network of
    :func:`~..families.mixtures.moe_dense_widths`, each an ordinary ``mlp-*`` cell at the matched
    width. Which comparison asked for a dense cell is not part of its key (the computation does
    not read it): a dense width that both accountings give is one cell, listed once, and
    :func:`moe_rows` finds it again from the mixture's settings."""
    sizes, se = moe_sizes(P), P.sample_efficiency
    jobs: list[Job] = []
    for K in sizes.Ks:
        m = moe_expert_width(K, P)
        specs = {(MOE_RELU, m): method_spec(MOE_RELU, P, (m, se.batch), n_experts=K)}
        for dense in (MLP_RELU, MLP_REGLU):
            for (act, _), w in moe_dense_widths(K, P, m, activation="relu").items():
                if network_method(act) == dense:
                    specs[(dense, w)] = method_spec(dense, P, (w, se.batch))
        jobs += [Job(method, data_spec(K, n, r, sizes.n_test), spec, P.name)
                 for n in sizes.ns for r in range(sizes.runs) for (method, _), spec in specs.items()]
    return list(dict.fromkeys(jobs))


# beyond the paper (page 10): a top-1 mixture of K experts against dense ReLU / ReGLU networks
# of its parameter count and of its forward FLOPs (the dense cells: plain mlp-* cells whose
# width is the matched one, so a width equal to Figure 2's is Figure 2's cell)
register_figure(Figure("moe", "Explicit mixture of experts against dense MLPs at matched parameters and FLOPs (beyond the paper)",
                       (MOE_RELU, MLP_RELU, MLP_REGLU), "moe", jobs=moe_jobs))


def page_cost(P: Profile, device: DeviceModel) -> dict[str, float]:
    """The mixture-of-experts share of page 10's heavy work (:mod:`~..estimate`): per K, the
    mixtures (one stack of the grid's n and runs) and the dense networks at the matched widths
    (a width both accountings give, once), every network charged to the update cap."""
    g, s = P.moe, P.sample_efficiency
    if g is None:
        return {}
    cells = len(g.ns) * g.runs
    moes = dense = 0.0
    for K in g.Ks:
        m = moe_expert_width(K, P)
        moes += s.max_steps * moe_update_seconds(K, m, s.batch, MIXED_LINK_D, device, cells)
        for act, w in {(act, w) for (act, _), w in moe_dense_widths(K, P, m).items()}:
            dense += s.max_steps * mlp_update_seconds(w, s.batch, MIXED_LINK_D, act, device, cells)
    return {"mixtures of experts": moes, "dense nets at matched parameters and FLOPs": dense}


register_cost("10_beyond_experts", page_cost, question=3)


def _mean(values) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def moe_rows(records: dict[Job, dict]) -> list[dict[str, Any]]:
    """One row per (K, n) with a mixture cell (ascending), over the runs that have one: the
    mixture's test MSE (mean over runs), its training MSE and stop reasons, the router's ARI
    against the true clusters (mean and minimum over runs), how many experts receive test points
    (fewest over runs) and the largest expert's share; and, for each dense activation and match
    (``relu_params``, ``reglu_params``, ``relu_flops``, ``reglu_flops``), the dense network's
    width (recomputed from the mixture's settings with
    :func:`~monosem.models.matched_dense_width`: which comparison a dense cell serves is not in
    its key), its test MSE (mean over the runs that have it), its parameter count and FLOPs, beside
    the mixture's (``moe_params``, ``moe_flops``)."""
    dense = {(j.method, j.K, j.n, j.run, j.spec.width, j.spec.batch): rec["metrics"]
             for j, rec in records.items() if j.method in NETWORKS.values()}
    groups: dict[tuple[int, int], list[tuple[Job, dict]]] = {}
    for j, rec in records.items():
        if j.method in MIXTURES.values():
            groups.setdefault((j.K, j.n), []).append((j, rec["metrics"]))
    rows = []
    for (K, n), cells in sorted(groups.items()):
        moe = cells[0][0].spec
        E, m, act = moe.n_experts, moe.network.width, moe.network.activation
        ms = [mm for _, mm in cells]
        row: dict[str, Any] = {
            "K": K, "n": n, "E": E, "m": m, "activation": act, "runs": len(cells),
            "moe": _mean(mm["test_mse"] for mm in ms), "moe_train_mse": _mean(mm.get("train_mse") for mm in ms),
            "moe_stop": sorted({mm.get("stop_reason") or "-" for mm in ms}),
            "router_ari": _mean(mm.get("router_ari") for mm in ms),
            "router_ari_min": min((mm["router_ari"] for mm in ms if mm.get("router_ari") is not None), default=None),
            "experts_used": min((sum(v > 0 for v in mm["expert_load"]) for mm in ms if mm.get("expert_load")), default=None),
            "max_load": max((max(mm["expert_load"]) for mm in ms if mm.get("expert_load")), default=None),
            "moe_params": parameter_count("moe", MIXED_LINK_D, m, act, E),
            "moe_flops": forward_flops("moe", MIXED_LINK_D, m, act, E),
        }
        for dact, match in _MOE_DENSE:
            w = matched_dense_width(E, m, MIXED_LINK_D, act, match, dense_activation=dact)
            found = [dense.get((network_method(dact), K, n, j.run, w, moe.network.batch)) for j, _ in cells]
            key = f"{dact}_{match}"
            row[key] = _mean(f["test_mse"] for f in found if f is not None)
            row[f"{key}_width"] = w
            row[f"{key}_n_params"] = parameter_count("mlp", MIXED_LINK_D, w, dact)
            row[f"{key}_flops"] = forward_flops("mlp", MIXED_LINK_D, w, dact)
        rows.append(row)
    return rows


def moe_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """:func:`moe_rows` as a table indexed by (K, n): the experts' width m and count E, the runs
    averaged, the test MSE (mean over runs) of the mixture and of the dense ReLU / ReGLU networks
    with its parameter count (=params) and with its forward FLOPs per example (=FLOPs), the
    router's ARI against the true clusters (test set) and the experts that receive test points;
    then the dense networks' widths, the mixture's training MSE, why its training stopped, and its
    largest expert's share of the test points (percent)."""
    columns = ["K", "n", "m", "E", "runs", "MoE test MSE", *(f"{label} test MSE" for label in _MOE_DENSE.values()),
               "router ARI", "experts used", *(f"{label} width" for label in _MOE_DENSE.values()), "MoE train MSE",
               "MoE stop", "largest expert load (%)"]
    out = []
    for r in rows:
        row = {"K": r["K"], "n": r["n"], "m": r["m"], "E": r["E"], "runs": r["runs"], "MoE test MSE": r["moe"],
               "router ARI": r["router_ari"], "experts used": r["experts_used"], "MoE train MSE": r["moe_train_mse"],
               "MoE stop": ", ".join(r["moe_stop"]), "largest expert load (%)": None if r["max_load"] is None else 100 * r["max_load"]}
        for (act, match), label in _MOE_DENSE.items():
            row |= {f"{label} test MSE": r[f"{act}_{match}"], f"{label} width": r[f"{act}_{match}_width"]}
        out.append(row)
    return frame(out, columns, ["K", "n"])


def moe_accounting(profile: str | Profile) -> str:
    """The parameter and FLOP arithmetic of page 10's mixtures at ``profile``, for every K of its
    grid: the router's and the experts' parameters, the routed forward FLOPs (a product of a
    p-vector with a p x q matrix counted as 2pq, as ``torch.utils.flop_counter`` counts it;
    elementwise work not counted), and the dense ReLU / ReGLU widths matched to each (lines of at
    most 80 characters)."""
    P = get_profile(profile)
    sizes = P.moe
    if sizes is None:
        raise ValueError(f"profile {P.name!r} has no moe grid")
    d = MIXED_LINK_D
    ref = sizes.reference_width or P.sample_efficiency.width
    lines = [f"d = {d} inputs; E = K experts, each a ReLU network of width m; m: the grid's,",
             "else the one whose mixture's parameters are closest to the dense ReLU net of",
             f"width {ref} ({parameter_count('mlp', d, ref, 'relu')} parameters, Figure 2's network "
             f"at profile {P.name!r})"]
    for K in sizes.Ks:
        E, m = K, moe_expert_width(K, P)
        router, expert = E * (d + 1), m * (d + 1) + m + 1
        total = parameter_count("moe", d, m, "relu", E)
        f_router, f_expert = 2 * d * E, 2 * d * m + 2 * m
        flops = forward_flops("moe", d, m, "relu", E)
        assert router + E * expert == total and f_router + f_expert == flops  # the formulas below are the code's
        lines += ["", f"K = {K}: E = {E} experts of width m = {m}",
                  f"  parameters: router E(d+1) = {E}*{d + 1} = {router}; experts E(m(d+1)+m+1) =",
                  f"    {E}*({m}*{d + 1}+{m}+1) = {E * expert}; total {total}",
                  f"  FLOPs per example: router 2dE = 2*{d}*{E} = {f_router}; the routed expert",
                  f"    2dm+2m = 2*{d}*{m}+2*{m} = {f_expert}; total {flops}",
                  f"    (not counted: the other experts' first layers, 2dm(E-1) = {2 * d * m * (E - 1)},",
                  "    which the vectorized code evaluates but a true dispatch does not)"]
        widths = moe_dense_widths(K, P, m)
        for match, target in (("params", total), ("flops", flops)):
            lines.append(f"  matched {'parameters' if match == 'params' else 'FLOPs'} ({target}):")
            for act in ("relu", "reglu"):
                H = widths[(act, match)]
                n_par, n_fl = parameter_count("mlp", d, H, act), forward_flops("mlp", d, H, act)
                if act == "relu":
                    par = f"H(d+1)+H+1 = {H}*{d + 1}+{H}+1 = {n_par}"
                    fl = f"2dH+2H = {2 * d + 2}*{H} = {n_fl}"
                else:
                    par = f"2H(d+1)+H+1 = {H}*{2 * (d + 1)}+{H}+1 = {n_par}"
                    fl = f"4dH+2H = {4 * d + 2}*{H} = {n_fl}"
                mine, other = (par, fl) if match == "params" else (fl, par)
                off = (n_par if match == "params" else n_fl) / target - 1
                lines.append(f"    {_MOE_ACT[act]} H = {H}: {mine} ({percent(off, 1, sign=True)})")
                lines.append(f"      its {'FLOPs' if match == 'params' else 'parameters'}: {other}")
    return "\n".join(lines)


#: ratios MoE / dense within this band of 1 are reported as ties, not wins or losses: the sweep
#: has one run per cell, so the seed-to-seed spread is not measured (our choice)
MOE_TIE_BAND = 0.05


def _moe_verdict(rows: list[dict[str, Any]], match: str) -> tuple[list[str], int, int, int]:
    """The lines of one accounting's verdict for the rows of one K, and (wins, losses, compared)."""
    lines, wins, losses, compared = [], 0, 0, 0
    for r in rows:
        dense = {act: r[f"{act}_{match}"] for act in ("relu", "reglu") if r[f"{act}_{match}"] is not None}
        if r["moe"] is None or not dense:
            lines.append(f"    n = {r['n']}: not every network computed yet")
            continue
        best = min(dense, key=dense.get)
        ratio = r["moe"] / dense[best]
        compared += 1
        if ratio < 1 - MOE_TIE_BAND:
            wins += 1
            how = f"wins, {1 / ratio:.2f}× lower MSE"
        elif ratio > 1 + MOE_TIE_BAND:
            losses += 1
            how = f"loses, {ratio:.2f}× higher MSE"
        else:
            how = f"a tie (within {percent(MOE_TIE_BAND)})"
        lines.append(f"    n = {r['n']}: MoE / {_MOE_ACT[best]} (the better dense) = {ratio:.2f}: {how}")
    return lines, wins, losses, compared


def _moe_totals(totals: dict[str, list[int]]) -> list[str]:
    """Per accounting, the mixture's wins and losses over the grid's (K, n) cells."""
    return [f"at matched {'parameters' if match == 'params' else 'FLOPs'}: the MoE wins {wins}, loses {losses} of "
            f"{compared} (K, n) cells" for match, (wins, losses, compared) in totals.items()]


def moe_answer(rows: list[dict[str, Any]]) -> str:
    """The question's answer in one line: the mixture's wins and losses over the grid, per
    accounting (a win: MoE / better dense below 1 - :data:`MOE_TIE_BAND`)."""
    if not rows:
        return "no mixture-of-experts cell computed yet"
    totals = {match: [0, 0, 0] for match in MOE_MATCHES}
    for K in dict.fromkeys(r["K"] for r in rows):
        for match in MOE_MATCHES:
            _, *counts = _moe_verdict([r for r in rows if r["K"] == K], match)
            totals[match] = [a + b for a, b in zip(totals[match], counts)]
    return "; ".join(_moe_totals(totals))


def moe_findings(rows: list[dict[str, Any]]) -> str:
    """The verdict, computed per K: at matched parameters and at matched forward FLOPs, does the
    mixture's test MSE beat the better of the dense ReLU and ReGLU networks at each n, and by what
    factor (the ratio MoE / better dense: below 1 the mixture wins); then the router's cluster
    recovery (ARI) and the experts it uses; a last line counts the wins over the grid."""
    if not rows:
        return "no mixture-of-experts cell computed yet"
    lines, totals = [], {match: [0, 0, 0] for match in MOE_MATCHES}
    for K in dict.fromkeys(r["K"] for r in rows):
        mine = [r for r in rows if r["K"] == K]
        lines.append(f"K = {K} (E = {mine[0]['E']} experts of width {mine[0]['m']}):")
        for match in MOE_MATCHES:
            body, wins, losses, compared = _moe_verdict(mine, match)
            for k, v in enumerate((wins, losses, compared)):
                totals[match][k] += v
            label = "matched parameters" if match == "params" else "matched FLOPs"
            ties = compared - wins - losses
            summary = ("no n computed yet" if not compared else "the MoE wins at every n" if wins == compared
                       else "the MoE loses at every n" if losses == compared
                       else f"the MoE wins at {wins}, loses at {losses}" + (f", ties at {ties}" if ties else "") + f" of {compared} n")
            lines += [f"  {label}: {summary}", *body]
        aris = [r["router_ari"] for r in mine if r["router_ari"] is not None]
        used = [r["experts_used"] for r in mine if r["experts_used"] is not None]
        if aris:
            lines.append(f"  router ARI against the true clusters: {min(aris):.2f} to {max(aris):.2f} over n "
                         "(1: the clusters)")
        if used:
            span = f"{min(used)}" if min(used) == max(used) else f"{min(used)} to {max(used)}"
            lines.append(f"  experts receiving test points: {span} of {mine[0]['E']}")
    lines += [f"over the grid, {line}" for line in _moe_totals(totals)]
    lines.append(f"(a tie: MoE / dense within {percent(MOE_TIE_BAND)} of 1; one run per cell, no spread measured)")
    return "\n".join(lines)


def plot_moe_figure(P, records: dict, source: str = "", cache=None):
    """Page 10's mixture-of-experts sweep as ``monosem plot moe`` draws it: one panel per K, two
    per row (:func:`plot_moe`). Two dense cells per activation and (K, n) (matched parameters,
    matched FLOPs): pooling them by method, as the generic curves do, would mix two networks."""
    rows = moe_rows(records)
    if not rows:
        raise ValueError(f"no results of moe at profile {P.name!r} to draw: run `python -m monosem run moe --profile {P.name}` first")
    with plots.paper_style():
        fig, axes = plots.panel_grid(len({r["K"] for r in rows}), panel_height=3.0)
        plot_moe(rows, list(axes))
        scale = "" if not P.reduced_scale else f" (profile {P.name}: reduced scale)"
        fig.suptitle(figure_of("moe").title + scale + (f", {source}" if source else ""), fontsize=8)
    return fig


register_plot("moe", plot_moe_figure)


def plot_moe(rows: list[dict[str, Any]], axes) -> None:
    """One panel per K (the axes, in the order of the rows' K): test MSE against n, log-log, of
    the mixture (black) and of the dense ReLU / ReGLU networks at matched parameters (solid) and
    at matched FLOPs (dashed); the label-noise variance dotted."""
    Ks = list(dict.fromkeys(r["K"] for r in rows))
    if len(axes) < len(Ks):
        raise ValueError(f"axes must hold one panel per K ({len(Ks)}), got {len(axes)}")
    colors = {"relu": "C0", "reglu": "C1"}
    for ax, K in zip(axes, Ks):
        mine = [r for r in rows if r["K"] == K]
        ns = [r["n"] for r in mine]
        ax.plot(ns, [r["moe"] if r["moe"] is not None else np.nan for r in mine], "k-", marker="o",
                label=f"MoE, E = K, m = {mine[0]['m']}")
        for act, match in _MOE_DENSE:
            key = f"{act}_{match}"
            ax.plot(ns, [r[key] if r[key] is not None else np.nan for r in mine], "-" if match == "params" else "--",
                    color=colors[act], marker="s" if match == "params" else "^", ms=4,
                    label=f"{_MOE_ACT[act]}, width {mine[0][f'{key}_width']} ({'params' if match == 'params' else 'FLOPs'})")
        ax.axhline(LABEL_NOISE_VARIANCE, color="0.6", ls=":", lw=1, label="label-noise variance")
        ax.set(xscale="log", yscale="log", xlabel="training examples n", title=f"K = {K}")
        ax.set_xticks(ns, [f"{v:g}" for v in ns])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.legend()
    axes[0].set_ylabel("test MSE")

