"""The sensitivity study drawn: its map, active share against alignment, setting by setting
(:func:`plot_map`; ``monosem plot figure1-study``)."""

from __future__ import annotations

import pandas as pd

from ....specialization import PAPER_FIGURE1, PAPER_FIGURE1_WIDTH
from ....tables import thousands
from .study_analysis import BRANCHES, FACTORS

__all__ = ["plot_map"]


def plot_map(selected: pd.DataFrame, paper: dict | None = None):
    """The map: one panel per branch, active share (x) against % A >= .71 (y), one point per
    setting (seed mean; the bars span the seeds), coloured by family of factors and marked by factor;
    the paper's value a star."""
    import matplotlib.pyplot as plt

    from .... import plots

    paper = PAPER_FIGURE1 if paper is None else paper
    groups: dict[str, str] = {}
    for factor, labels in FACTORS.items():  # a setting shared by two factors takes the first one's colour
        for lab in labels:
            if lab != "base (balanced, x0.1)":
                groups.setdefault(lab, factor)
    # eleven factors, but at most eight colours a reader can tell apart: one colour per family of
    # factors (the text before its parenthesis; horizon and length together), a marker per factor
    # within it; black the base setting, crimson the paper
    def family(factor: str) -> str:
        return "schedule" if factor in ("cosine horizon", "training length") else factor.split(" (")[0]

    palette = [plt.get_cmap("tab10").colors[i] for i in (0, 1, 2, 4, 5, 9)]
    families = list(dict.fromkeys(family(f) for f in FACTORS))
    colors = {f: palette[families.index(family(f)) % len(palette)] for f in FACTORS}
    markers = {}
    for f in FACTORS:
        markers[f] = "osD^v"[sum(family(g) == family(f) for g in markers)]
    with plots.paper_style():
        fig, axes = plots.panel_grid(len(BRANCHES), cols=2, panel_height=3.0)
        for ax, branch in zip(axes, BRANCHES):
            sub = selected[selected["branch"] == branch]
            for label, g in sub.groupby("setting", sort=False):
                factor = groups.get(label)
                color = "black" if factor is None else colors[factor]
                marker = "o" if factor is None else markers[factor]
                x, y = g["active_pct"], g["A071_pct"]
                ax.errorbar(x.mean(), y.mean(), xerr=[[x.mean() - x.min()], [x.max() - x.mean()]],
                            yerr=[[y.mean() - y.min()], [y.max() - y.mean()]], fmt=marker, ms=4.5, color=color, lw=0.8,
                            alpha=0.85)
            n_act, a71, _ = paper[branch]
            ax.plot(100 * n_act / PAPER_FIGURE1_WIDTH, a71, marker="*", ms=14, color="crimson", mec="black", ls="none")
            ax.set_title(branch)
            ax.set_xlim(0, 102)
            ax.set_ylim(-2, 102)
            ax.set_xlabel("active share of the width (%)")
            ax.set_ylabel("% of active with $A_j \\geq 0.71$")
        handles = [plt.Line2D([], [], marker=markers[f], ls="none", color=c, label=f) for f, c in colors.items()]
        handles += [plt.Line2D([], [], marker="o", ls="none", color="black", label="base (balanced, x0.1)"),
                    plt.Line2D([], [], marker="*", ms=12, ls="none", color="crimson", mec="black", label=f"the paper (width {thousands(PAPER_FIGURE1_WIDTH)})")]
        fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False)
    return fig
