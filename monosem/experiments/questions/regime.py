"""The regime map of Section 3.2: where, in (K, n, network size), the paper's two findings appear.

Figure 2's curves start at n = 20 000 and use networks of width 4 096 trained for at least 20 000
Adam updates. The map asks what a reader of the book's reduced-scale pages needs to know first:
at K = 10 and K = 50, for n from 10 000 to 200 000 and two network sizes, how close do ReLU and
ReGLU MLPs, trained with the full Appendix A.2 protocol, come to the per-cluster oracles, and does
the gap shrink as n grows? Every MLP cell also says how it stopped (target MSE, plateau rule,
update cap) and at what training MSE, so that "under-trained" and "memorized" are numbers, not
words.

The cells are ordinary sweep jobs (``sweep("regime", "long")``) shared with the ``long``
profile's Figure 2 where their settings agree. Global Laplace is RFM's iteration 0 (same
bandwidth rule, same solver), read off the RFM cell.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..verdicts import scored
from ..specs import width_of
from ..estimate import core_seconds
from ...tables import span, thousands
from ..families.kernels import LAPLACE, ORACLE_LAPLACE, ORACLE_RFM, RFM
from ..families.networks import MLP_REGLU, MLP_RELU
from ..families.bayes import BAYES
from ..sweeps import Figure, register_figure
from ..registry import method_of

__all__ = ["RegimeCell", "regime_cells", "mlp_oracle_ratios", "regime_frames", "ratio_table", "regime_findings", "extrapolate_ratio", "plot_regime",
           "timings_frame", "timings_summary", "plot_training_curves", "still_falling"]

#: the MLPs of the map, with the label used in its tables
MLP_METHODS = {MLP_RELU: "ReLU", MLP_REGLU: "ReGLU"}


@dataclass
class RegimeCell:
    """All methods at one (K, n), averaged over the runs present. ``mlp`` maps
    ``(method, width)`` to a dict of test MSE, training MSE, stop reason, stop step and seconds."""

    K: int
    n: int
    runs: int = 0
    mlp: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    kernels: dict[str, float] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    #: the RFM oracle's test MSE at iterations 0-3 (run means)
    oracle_rfm_iterations: list[float] = field(default_factory=list)

    def oracle_rfm_unstable(self) -> bool:
        """Whether the RFM oracle ends worse than its own iteration 0 (the Laplace oracle): with
        the true clusters its metric updates improve on iteration 0 wherever its fits are sound,
        so a final test MSE above iteration 0's marks a failed fit (seen where each cluster's
        kernel system is solved by EigenPro rather than exactly), not a property of RFM."""
        it = self.oracle_rfm_iterations
        return len(it) > 1 and it[-1] > it[0]

    def best_oracle(self) -> float:
        """The better of the two oracles, leaving out an unstable RFM oracle; unknown (NaN) while
        the RFM oracle is not recorded, since the Laplace oracle alone would flatter the MLPs."""
        if ORACLE_RFM not in self.kernels:
            return float("nan")
        methods = (ORACLE_LAPLACE,) if self.oracle_rfm_unstable() else (ORACLE_RFM, ORACLE_LAPLACE)
        vals = [self.kernels[m] for m in methods if m in self.kernels]
        return min(vals) if vals else float("nan")


def regime_cells(records: dict) -> list[RegimeCell]:
    """Group ``{job: record}`` (regime-map jobs) into one :class:`RegimeCell` per (K, n)."""
    raw: dict[tuple[int, int], dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for job, rec in records.items():
        m, t = rec["metrics"], float(rec.get("timing", {}).get("seconds", float("nan")))
        slot = raw[(job.K, job.n)]
        if job.method in MLP_METHODS:
            net = job.spec
            slot[(job.method, net.width)].append((m, t, net))
        elif job.method == RFM:
            slot[RFM].append((m["test_mse"], t, None))
            slot[LAPLACE].append((m["test_mse_by_iteration"][0], t, None))
            slot["rfm-final"].append((m["test_mse_final"], t, None))
        else:
            # every RFM variant by the global one's rule, the best of iterations 0-3
            slot[job.method].append((scored(rec, "best"), t, None))
            if job.method == ORACLE_RFM and "test_mse_by_iteration" in m:
                slot["oracle-rfm-iterations"].append((m["test_mse_by_iteration"], t, None))
    cells = []
    for (K, n), slot in sorted(raw.items()):
        cell = RegimeCell(K, n)
        for key, vals in slot.items():
            if isinstance(key, tuple):
                ms = [v[0] for v in vals]
                cell.mlp[key] = {
                    "test_mse": float(np.mean([m["test_mse"] for m in ms])),
                    "train_mse": float(np.mean([m["train_mse"] for m in ms])),
                    "stop_reason": "/".join(sorted({m.get("stop_reason", "?") for m in ms})),
                    "stop_step": int(max(m["stop_step"] for m in ms)),
                    "seconds": float(np.mean([v[1] for v in vals])),
                    "batch": vals[0][2].batch,
                    "runs": len(ms),
                }
                cell.runs = max(cell.runs, len(ms))
            elif key == "oracle-rfm-iterations":
                cell.oracle_rfm_iterations = [float(v) for v in np.mean([v[0] for v in vals], axis=0)]
            else:
                cell.kernels[key] = float(np.mean([v[0] for v in vals]))
                cell.seconds[key] = float(np.mean([v[1] for v in vals]))
        cells.append(cell)
    return cells


def mlp_oracle_ratios(cells: list[RegimeCell], K: int, n: int) -> list[float]:
    """At (K, n): per network width (ascending) the best MLP's test MSE over the better oracle's
    (:meth:`RegimeCell.best_oracle`); empty where the map has no such cell."""
    cell = next((c for c in cells if c.K == K and c.n == n), None)
    if cell is None:
        return []
    return [min(v["test_mse"] for (_, w), v in cell.mlp.items() if w == width) / cell.best_oracle()
            for width in sorted({w for (_, w) in cell.mlp})]


def _widths(cells: list[RegimeCell]) -> list[int]:
    return sorted({w for c in cells for (_, w) in c.mlp})


#: the kernel columns of :func:`regime_frames`: record key and column name
KERNEL_COLUMNS = {LAPLACE: "global Laplace test MSE", RFM: "global RFM (best) test MSE",
                  ORACLE_LAPLACE: "Laplace oracle test MSE", ORACLE_RFM: "RFM oracle test MSE", BAYES: "Bayes risk (test MSE)"}
#: the quantities per network in :func:`regime_frames`
_MLP_QUANTITIES = ("test MSE", "training MSE", "stop reason", "stopped at (updates)", "runs")


def regime_frames(cells: list[RegimeCell]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The map as two tables (run means).

    The networks, one row per (K, n, width, activation): the test MSE, the training MSE of the
    kept checkpoint, why training stopped (target MSE, plateau rule or update cap) and after how
    many updates (the latest over runs), and the number of runs. The kernels and the Bayes risk,
    one row per (K, n): test MSE of global Laplace (RFM's iteration 0), global RFM (the best of
    iterations 0-3, the paper's envelope), both oracles and the Bayes risk."""
    widths = _widths(cells)
    nets = {}
    for c in cells:
        for w in widths:
            for method, label in MLP_METHODS.items():
                m = c.mlp.get((method, w))
                if m is not None:
                    nets[(c.K, c.n, w, label)] = {"test MSE": m["test_mse"], "training MSE": m["train_mse"],
                                                  "stop reason": m["stop_reason"], "stopped at (updates)": m["stop_step"],
                                                  "runs": m["runs"]}
    networks = pd.DataFrame.from_dict(nets, orient="index").reindex(columns=list(_MLP_QUANTITIES))
    networks.index = pd.MultiIndex.from_tuples(list(nets), names=["K", "n", "width", "network"])
    networks["stopped at (updates)"] = networks["stopped at (updates)"].astype("Int64")
    networks["runs"] = networks["runs"].astype(int)
    kernels = pd.DataFrame([[c.kernels.get(key, float("nan")) for key in KERNEL_COLUMNS] for c in cells],
                           columns=list(KERNEL_COLUMNS.values()), dtype=float,
                           index=pd.MultiIndex.from_tuples([(c.K, c.n) for c in cells], names=["K", "n"]))
    return networks, kernels


def ratio_table(cells: list[RegimeCell]) -> list[dict[str, Any]]:
    """Per (K, n, width): best MLP / best oracle, best MLP / global RFM, ReGLU / ReLU."""
    out = []
    for c in cells:
        for w in _widths(cells):
            relu, reglu = c.mlp.get((MLP_RELU, w)), c.mlp.get((MLP_REGLU, w))
            mlps = [m["test_mse"] for m in (relu, reglu) if m is not None]
            if not mlps:
                continue
            best = min(mlps)
            out.append({
                "K": c.K, "n": c.n, "width": w, "best_mlp": best,
                "mlp_over_oracle": best / c.best_oracle() if c.kernels.get(ORACLE_RFM) or c.kernels.get(ORACLE_LAPLACE) else float("nan"),
                "mlp_over_rfm": best / c.kernels[RFM] if RFM in c.kernels else float("nan"),
                "reglu_over_relu": reglu["test_mse"] / relu["test_mse"] if relu and reglu else float("nan"),
            })
    return out


def extrapolate_ratio(ns, ratios, target: float = 2.0) -> float:
    """The n at which a power law fitted to ``ratio(n)`` (least squares in log-log) reaches
    ``target``; ``inf`` when the fitted ratio does not fall, ``nan`` with fewer than two points."""
    ns, ratios = np.asarray(ns, float), np.asarray(ratios, float)
    ok = np.isfinite(ratios) & (ratios > 0)
    if ok.sum() < 2:
        return float("nan")
    slope, icept = np.polyfit(np.log(ns[ok]), np.log(ratios[ok]), 1)
    if slope >= 0:
        return float("inf")
    return float(np.exp((np.log(target) - icept) / slope))


def regime_findings(cells: list[RegimeCell]) -> list[str]:
    """The two findings, judged on the map per (K, width): a few short lines each, with their
    numbers (best MLP / best oracle and its trend in n, where the MLP beats global RFM, ReGLU /
    ReLU), at the training sizes where both networks of that width are recorded."""
    rows = ratio_table(cells)
    lines = []
    for K in sorted({r["K"] for r in rows}):
        for w in sorted({r["width"] for r in rows if r["K"] == K}):
            # only the sizes where both networks are recorded: the best MLP of a half-done cell
            # is not the best MLP
            rs = sorted((r for r in rows if r["K"] == K and r["width"] == w and r["reglu_over_relu"] == r["reglu_over_relu"]),
                        key=lambda r: r["n"])
            if not rs:
                continue
            ns = [r["n"] for r in rs]
            ratio = [r["mlp_over_oracle"] for r in rs]
            if len(rs) < 2:
                trend = "one n so far"
            else:
                n2 = extrapolate_ratio(ns, ratio)
                tail = ("within 2x at the largest n" if np.isfinite(ratio[-1]) and ratio[-1] <= 2 else
                        f"a power law in n reaches 2x at n ~ {n2:.2g}" if np.isfinite(n2) else "the fitted ratio does not fall")
                # the trend over the sizes whose ratio is known (an oracle not yet recomputed is not)
                fn, fr = zip(*[(n, v) for n, v in zip(ns, ratio) if np.isfinite(v)]) if any(np.isfinite(ratio)) else ((), ())
                rises = [f"{_k(a)} -> {_k(b)}" for a, b, u, v in zip(fn, fn[1:], fr, fr[1:]) if v > u]
                if len(fr) < 2:
                    trend = "one n with a known ratio so far"
                elif fr[-1] >= fr[0]:
                    trend = "does not shrink as n grows"
                elif rises:
                    trend = f"shrinks overall, but rises at n = {', '.join(rises)}"
                else:
                    trend = "shrinks at every step as n grows"
                trend = f"{trend};\n    {tail}"
            beats = [_k(r["n"]) for r in rs if r["mlp_over_rfm"] < 1]
            gate = [_k(r["n"]) for r in rs if r["reglu_over_relu"] < 1]
            unstable = {c.n for c in cells if c.K == K and c.oracle_rfm_unstable()}
            lines += [
                f"K = {K}, width {w}:",
                *_wrapped("  best MLP / best oracle: ",
                          [f"{v:.2f} ({_k(n)}{'*' if n in unstable else ''})" if np.isfinite(v) else f"n/a ({_k(n)})"
                           for v, n in zip(ratio, ns)]),
                *(f"    {t}" for t in trend.split("\n    ")),
                f"  the best MLP beats global RFM at n = {', '.join(beats) or 'none'}"
                f" (of {', '.join(_k(r['n']) for r in rs if np.isfinite(r['mlp_over_rfm'])) or 'none'} with RFM)",
                *_wrapped("  ReGLU / ReLU: ", [f"{r['reglu_over_relu']:.2f} ({_k(r['n'])})" for r in rs
                                                if r["reglu_over_relu"] == r["reglu_over_relu"]]),
                f"    ReGLU better at n = {', '.join(gate) or 'none'}",
            ]
    for c in cells:
        if c.oracle_rfm_unstable():
            its = ", ".join(f"{v:.2g}" for v in c.oracle_rfm_iterations)
            lines += [f"* K = {c.K}, n = {_k(c.n)}: the RFM oracle is unstable (test MSE at iterations",
                      f"  0-3: {its}), so the ratio is against the Laplace oracle"]
    return lines


def _wrapped(head: str, items: list[str], width: int = 80) -> list[str]:
    """``head`` and the comma-separated ``items`` in lines of at most ``width`` characters, the
    continuation lines indented under the first item."""
    lines, line = [], head
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "")
        if len(line) + len(piece) + 1 > width and line.strip() and line != head:
            lines.append(line.rstrip())
            line = " " * len(head)
        line += ("" if line.endswith(" ") else " ") + piece
    lines.append(line.rstrip())
    return lines


def _k(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def plot_regime(cells: list[RegimeCell], title: str = ""):
    """One panel per K: test MSE against n, MLPs per width (solid: widest), kernels and Bayes."""

    from ... import plots

    Ks = sorted({c.K for c in cells})
    widths = _widths(cells)
    with plots.paper_style():
        # two panels to a row at the page's width: the labels keep their point size on the page
        fig, flat = plots.panel_grid(len(Ks), cols=2, panel_height=3.0, extra_height=1.2)
        axes = flat.reshape(1, -1)
        for ax, K in zip(axes[0], Ks):
            mine = [c for c in cells if c.K == K]
            curves = {}
            for key in (LAPLACE, RFM, ORACLE_LAPLACE, ORACLE_RFM, BAYES):
                pts = [(c.n, c.kernels[key]) for c in mine if key in c.kernels]
                if pts:
                    curves[key] = (*zip(*pts), [1.0] * len(pts))  # one run: no band
            plots.efficiency_panel(ax, curves, {m: method_of(m).style for m in curves}, title=f"K = {K}")
            for method, color in ((MLP_RELU, "tab:blue"), (MLP_REGLU, "tab:red")):
                for w in widths:
                    pts = [(c.n, c.mlp[(method, w)]["test_mse"]) for c in mine if (method, w) in c.mlp]
                    if pts:
                        ns, ys = zip(*pts)
                        ax.plot(ns, ys, color=color, marker="o", ms=4, lw=1.4, ls="-" if w == widths[-1] else ":",
                                label=f"{MLP_METHODS[method]} MLP, width {w}")
            all_ns = sorted({c.n for c in mine})
            ax.set_xticks(all_ns, [f"{n // 1000}k" for n in all_ns])
        legend = {}
        for ax in axes[0]:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                legend.setdefault(label, handle)
        fig.legend(list(legend.values()), list(legend), loc="outside lower center", ncol=2)
        if title:
            fig.suptitle(title)
    return fig


def _by_cell(records: dict):
    return sorted(records.items(), key=lambda kv: (kv[0].K, kv[0].n, kv[0].method, width_of(kv[0]) or 0))


def timings_frame(records: dict) -> pd.DataFrame:
    """The time of every recorded cell: one row per cell, its method, network width (none for a
    kernel), K, n, run, wall seconds, core seconds (:func:`~..estimate.core_seconds`: the CPU time
    of a one-thread cell, the time its computation took), torch threads and device (none where not
    recorded)."""
    rows = []
    for job, rec in _by_cell(records):
        t = rec.get("timing", {})
        core = core_seconds(rec)
        rows.append({"method": job.method, "width": width_of(job), "K": job.K, "n": job.n, "run": job.run,
                     "seconds": float(t.get("seconds", float("nan"))), "core seconds": float("nan") if core is None else core,
                     "threads": t.get("threads"), "device": t.get("device")})
    columns = ["method", "width", "K", "n", "run", "seconds", "core seconds", "threads", "device"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.astype({"width": "Int64", "K": int, "n": int, "run": int, "seconds": float, "core seconds": float,
                         "threads": "Int64", "device": object})


def timings_summary(records: dict) -> str:
    """The machine(s) that ran the recorded cells, their total wall time and their total compute
    (core-hours, :func:`~..estimate.core_seconds`), in a few lines."""
    if not records:
        return "no recorded cells yet"
    machines = {}
    for _, rec in _by_cell(records):
        mach = rec.get("machine", {})
        machines[(mach.get("platform"), mach.get("cpu_count"), mach.get("accelerator"))] = mach
    wall = sum(float(rec.get("timing", {}).get("seconds", 0.0)) for rec in records.values())
    core = sum(core_seconds(rec) or 0.0 for rec in records.values())
    head = [f"machine: {m.get('cpu_count')} cores, accelerator {m.get('accelerator') or 'none'}, torch {m.get('torch')}\n"
            f"  {m.get('platform')}, exported at commit {m.get('git_commit')}" for m in machines.values()]
    return "\n".join(head + [f"total: {wall / 3600:.2f} h of wall time, {core / 3600:.2f} core-hours of computation, over {len(records)} cells"])


def still_falling(records: dict, window: int = 20_000) -> str:
    """Whether the networks of ``records`` that stopped at the update cap were still learning
    there, in words: how many of them lowered their training MSE over their last ``window``
    updates, and by how much (the range over them, per cent of the value ``window`` updates
    before the cap; the curve's evaluation nearest that step)."""
    drops = []
    for job, rec in records.items():
        m = rec["metrics"]
        if job.method not in MLP_METHODS or m.get("stop_reason") != "cap" or not m.get("train_curve"):
            continue
        steps, values = (np.asarray(v, dtype=float) for v in zip(*m["train_curve"]))
        before = values[np.argmin(np.abs(steps - (steps[-1] - window)))]
        drops.append(1.0 - values[-1] / before)
    if not drops:
        return "no network of the map stops at the cap"
    falling = [d for d in drops if d > 0]
    text = (f"{len(falling)} of the {len(drops)} networks that stop at the cap lowered their training MSE over their last "
            f"{thousands(window)} updates")
    if falling:
        text += (f" (by {span([100 * f for f in falling], '.1f', ' %')}, median {100 * float(np.median(falling)):.1f} %"
                 f" of the value {thousands(window)} updates earlier)")
    return text


def plot_training_curves(records: dict, target: float | None = None, title: str = ""):
    """Training MSE against updates for every recorded MLP cell of the map (one panel per K and
    network width; colour: n, solid ReLU, dashed ReGLU), with the A.2 target: where a network
    stopped, and whether its curve was still falling there."""
    import matplotlib.pyplot as plt

    from ... import plots

    mlp = {job: rec for job, rec in records.items() if job.method in MLP_METHODS and rec["metrics"].get("train_curve")}
    panels = sorted({(job.K, width_of(job)) for job in mlp})
    ns = sorted({job.n for job in mlp})
    colors = dict(zip(ns, plt.get_cmap("viridis")(np.linspace(0, 0.9, max(1, len(ns))))))
    Ks, widths = sorted({K for K, _ in panels}), sorted({w for _, w in panels})
    with plots.paper_style():
        fig, axes = plt.subplots(max(1, len(Ks)), max(1, len(widths)), figsize=(plots.PAGE_WIDTH, 2.8 * max(1, len(Ks)) + 0.8),
                                 squeeze=False, layout="constrained", sharex=True)
        grid = {(K, w): axes[i][j] for i, K in enumerate(Ks) for j, w in enumerate(widths)}
        for (K, w), ax in grid.items():
            for job, rec in sorted(mlp.items(), key=lambda kv: (kv[0].n, kv[0].method)):
                if (job.K, width_of(job)) != (K, w):
                    continue
                steps, values = zip(*rec["metrics"]["train_curve"])
                ax.plot(steps, values, color=colors[job.n], ls="-" if job.method == MLP_RELU else "--", lw=1.1,
                        label=f"{MLP_METHODS[job.method]}, n = {_k(job.n)}")
            if target is not None:
                ax.axhline(target, color="grey", lw=0.8, ls="-.")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set(xlabel="updates", ylabel="training MSE", title=f"K = {K}, width {w}")
        legend = {}
        for ax in axes.flat:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                legend.setdefault(label, handle)
        if legend:
            fig.legend(list(legend.values()), list(legend), loc="outside lower center", ncol=min(4, len(legend)))
        if title:
            fig.suptitle(title)
    return fig


# global Laplace is RFM's iteration 0 (same bandwidth rule and solver): read off the rfm cell
register_figure(Figure("regime", "Regime map: MLPs against the oracles as n and the network grow (Section 3.2)",
                       (MLP_RELU, MLP_REGLU, RFM, ORACLE_LAPLACE, ORACLE_RFM, BAYES), "regime"))
