"""The ladder drawn: every network's MLP / oracle ratio rung by rung, at each K (:func:`plot_ladder`)."""

from __future__ import annotations

from typing import Any, Mapping

from ....profiles import Profile
from ...cache import Job
from ...verdicts import MIN_RUNS
from ..sample_efficiency import ORACLE_FACTOR
from .analysis import _per_run_ratios, ladder_frame
from .cells import Rung, ladder_sizes

__all__ = ["plot_ladder"]

def plot_ladder(records: Mapping[Job, Mapping[str, Any]], profile: str | Profile, title: str = ""):
    """One panel per K: every network's MLP / better-oracle ratio against the rung (points: runs,
    beside the rung; line: the ratio of the means; open points: networks stopped at the update
    cap, under-trained; a band: the runs' range, where a rung has the verdict rule's runs), with
    finding 1b's threshold."""
    import matplotlib.pyplot as plt

    from .... import plots

    sizes = ladder_sizes(profile)
    frame = ladder_frame(records, profile)
    colors = {"reglu": "tab:red", "relu": "tab:blue"}
    # the runs beside their network's mean, not under it: a single run hides under its mean's marker
    offsets = {"reglu": -0.12, "relu": 0.12}
    with plots.paper_style():
        fig, axes = plt.subplots(1, len(sizes.Ks), figsize=(4.6 * len(sizes.Ks), 3.6), squeeze=False, layout="constrained")
        for ax, K in zip(axes[0], sizes.Ks):
            for net, color in colors.items():
                rows = frame[(frame["K"] == K) & (frame["network"] == net)] if not frame.empty else frame
                if rows.empty:
                    continue
                ax.plot(rows["rung"], rows["MLP / oracle"], color=color, lw=1.4, marker="s", ms=5,
                        label=f"{'ReGLU' if net == 'reglu' else 'ReLU'} (ratio of means)")
                for i, rung in enumerate(sizes.rungs):
                    runs = _per_run_ratios(records, profile, rung, K, f"mlp-{net}")
                    if len(runs) >= MIN_RUNS:  # a band (the runs' range) only where the verdict rule has its runs
                        lo, hi = min(r for _, r in runs), max(r for _, r in runs)
                        ax.fill_between([i + offsets[net] - 0.08, i + offsets[net] + 0.08], lo, hi, color=color, alpha=0.18, lw=0)
                    for rec, ratio in runs:
                        capped = rec["metrics"].get("stop_reason") == "cap"
                        ax.plot([i + offsets[net]], [ratio], ls="none", marker="o", ms=4, color=color, alpha=0.7,
                                markerfacecolor="none" if capped else color)
            ax.axhline(ORACLE_FACTOR, color="0.3", ls="--", lw=1)
            ax.axhline(1.0, color="0.6", ls=":", lw=1)
            ax.set_yscale("log")
            ax.set_xticks(range(len(sizes.rungs)), [_tick(r) for r in sizes.rungs], fontsize=8)
            ax.set_xlim(-0.5, len(sizes.rungs) - 0.5)
            ax.set_title(f"K = {K}")
            ax.set_ylabel("MLP / better oracle")
            ax.set_xlabel("rung: width \u00d7 batch, training size n", fontsize=8)
        handles = [plt.Line2D([], [], color="0.3", ls="--", label=f"{ORACLE_FACTOR:g}× (finding 1b)"),
                   plt.Line2D([], [], color="0.3", ls="none", marker="o", label="a run"),
                   plt.Line2D([], [], color="0.3", ls="none", marker="o", markerfacecolor="none", label="a run at the update cap"),
                   plt.Rectangle((0, 0), 1, 1, color="0.3", alpha=0.18, lw=0, label=f"the runs' range ({MIN_RUNS} runs or more)")]
        lines = {}
        for ax in axes[0]:
            for h, label in zip(*ax.get_legend_handles_labels()):
                lines.setdefault(label, h)
        fig.legend([*lines.values(), *handles], [*lines, *(h.get_label() for h in handles)], loc="outside lower center", ncol=3)
        if title:
            fig.suptitle(title)
    return fig


def _tick(rung: Rung) -> str:
    """A rung's tick: width, batch and n on three short lines (one line of each rung's
    ``width x batch`` runs into its neighbour's at the column's width)."""
    return f"{rung.width}\n\u00d7 {rung.batch}\nn {rung.n // 1000}k"
