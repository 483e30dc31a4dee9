"""Figures in one consistent style.

This module sits at the bottom of the package: it draws arrays and knows nothing about data
models, training or kernels, so every layer above can use it.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

__all__ = [
    "paper_style", "to_numpy", "cluster_colors", "scatter_clusters", "response_by_cluster", "curves",
    "efficiency_panel", "flow_diagram", "PAGE_WIDTH", "panel_grid",
]

#: The book's text column is about 6.3 inches wide at the figures' 110 dpi, so a figure of at most
#: :data:`PAGE_WIDTH` inches is shown at its own size and every label keeps the point size set here
#: (ticks and legends at least 9.5 pt, about 14 px). A phone shows the same figure at about 0.55 of
#: that size, so the ticks stay at 8 px or more there too.
PAGE_WIDTH = 6.2

_STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 10.5,
    "axes.titlesize": 11,
    "axes.labelsize": 10.5,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "legend.fontsize": 9.5,
    "figure.titlesize": 10.5,
}


@contextmanager
def paper_style() -> Iterator[None]:
    """Matplotlib settings used by every figure of the book (a context manager)."""
    with mpl.rc_context(_STYLE):
        yield


def panel_grid(n: int, *, cols: int = 2, panel_height: float = 2.6, extra_height: float = 0.6,
               width: float = PAGE_WIDTH, **kwargs) -> tuple[plt.Figure, np.ndarray]:
    """A figure of ``n`` panels at most ``cols`` to a row, :data:`PAGE_WIDTH` wide; returns the
    figure and the ``n`` axes in reading order (the grid's unused cells are hidden). ``kwargs``
    go to :func:`matplotlib.pyplot.subplots` (``sharey=True``, ...)."""
    n = max(int(n), 1)
    ncols = min(cols, n)
    rows = -(-n // ncols)
    fig, axes = plt.subplots(rows, ncols, figsize=(width, panel_height * rows + extra_height), layout="constrained",
                             squeeze=False, **kwargs)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, np.array(flat[:n], dtype=object)


def to_numpy(a) -> np.ndarray:
    """A NumPy array from a NumPy array, a torch tensor (any device) or a sequence."""
    if hasattr(a, "detach"):
        return a.detach().cpu().numpy()
    return np.asarray(a)


def cluster_colors(K: int) -> np.ndarray:
    """K distinguishable RGBA colours (tab10 / tab20 while they last, then a hue wheel)."""
    if K <= 10:
        return plt.get_cmap("tab10")(np.arange(K))
    if K <= 20:
        return plt.get_cmap("tab20")(np.arange(K))
    return plt.get_cmap("hsv")(np.linspace(0, 1, K, endpoint=False))


def scatter_clusters(ax: plt.Axes, points, labels, *, title: str = "", s: float = 3.0, alpha: float = 0.5) -> None:
    """Scatter ``(n, 2)`` points coloured by integer cluster label."""
    pts, lab = to_numpy(points), to_numpy(labels).astype(int)
    if pts.ndim != 2 or pts.shape[1] != 2 or lab.shape != (pts.shape[0],):
        raise ValueError(f"points must be (n, 2) and labels (n,), got {pts.shape} and {lab.shape}")
    colors = cluster_colors(int(lab.max()) + 1)
    ax.scatter(pts[:, 0], pts[:, 1], c=colors[lab], s=s, alpha=alpha, linewidths=0, rasterized=True)
    ax.set_aspect("equal", adjustable="datalim")
    if title:
        ax.set_title(title)


def response_by_cluster(
    ax: plt.Axes, t, y, labels, clusters: Sequence[int], names: Sequence[str], *, s: float = 3.0
) -> None:
    """Scatter the response ``y`` against the projection ``t`` for the listed clusters."""
    t, y, lab = to_numpy(t), to_numpy(y), to_numpy(labels).astype(int)
    colors = cluster_colors(max(clusters) + 1 if len(clusters) else 1)
    for k, name in zip(clusters, names):
        sel = lab == k
        ax.scatter(t[sel], y[sel], s=s, alpha=0.5, color=colors[k], linewidths=0, label=f"c={k}: {name}", rasterized=True)
    ax.legend(markerscale=3, loc="best")


def curves(ax: plt.Axes, x, ys: dict, *, xlabel: str = "", ylabel: str = "", logy: bool = False) -> None:
    """Plot several named curves over the same abscissa."""
    xs = to_numpy(x)
    for name, yv in ys.items():
        ax.plot(xs, to_numpy(yv), label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    ax.legend()


def efficiency_panel(ax: plt.Axes, curves: dict, styles: dict | None = None, *, title: str = "", noise: float | None = None) -> None:
    """One panel of Figures 2/4/6: test MSE against n on log-log axes, with a band over runs.

    ``curves`` maps a method name to ``(ns, centre, factor)``: the geometric mean over runs and the
    geometric standard deviation (a factor >= 1; 1 for one run draws no band), so the band runs
    from centre ÷ factor to centre × factor. On a log axis that band is symmetric and never
    reaches below zero, where mean ± std over a few runs of errors spanning a decade would hide
    the panel. ``styles`` maps a method to its line's matplotlib keywords (``label`` among them;
    default: the method's name, matplotlib's colours). ``noise`` draws the label-noise variance
    as a thin horizontal line.
    """
    for method, (ns, centre, factor) in curves.items():
        ns, centre, factor = to_numpy(ns), to_numpy(centre), to_numpy(factor)
        style = {"label": method} | dict((styles or {}).get(method, {}))
        style.setdefault("ls", "-")
        ax.plot(ns, centre, ms=4, lw=1.4, **style)
        if np.any(factor > 1):
            ax.fill_between(ns, centre / factor, centre * factor, color=style.get("color"), alpha=0.15, lw=0)
    if noise is not None:
        ax.axhline(noise, color="grey", lw=0.8, ls="-.", label="noise level")
    ax.set_xscale("log")
    ax.set_yscale("log")
    all_ns = sorted({int(n) for ns, _, _ in curves.values() for n in to_numpy(ns)})
    if all_ns:  # label exactly the sample sizes of the sweep
        ax.set_xticks(all_ns, [f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n) for n in all_ns])
        ax.xaxis.set_minor_formatter(mpl.ticker.NullFormatter())
    ax.set_xlabel("training examples n")
    ax.set_ylabel("test MSE")
    if title:
        ax.set_title(title)


def flow_diagram(ax: plt.Axes, rows: Sequence[Sequence[str]], *, colors: Sequence[str] | None = None) -> None:
    """Boxes joined by arrows, one row of boxes per sequence in ``rows`` (a pipeline diagram); the
    last box of a row points to the first of the next, so the rows read as one pipeline."""
    ax.set_axis_off()
    n_cols = max(len(r) for r in rows)
    colors = list(colors or ["#dbe9f6", "#fde2c8", "#e2f0d9", "#eadcf0"])
    boxes = []
    for i, row in enumerate(rows):
        y = 1.0 - (i + 0.5) / len(rows)
        for j, text in enumerate(row):
            x = (j + 0.5) / n_cols
            label = ax.text(x, y, text, ha="center", va="center", fontsize=9.5, transform=ax.transAxes, wrap=True,
                            bbox=dict(boxstyle="round,pad=0.5", fc=colors[i % len(colors)], ec="0.4", lw=0.8))
            boxes.append((i, label))
    # arrows drawn between the boxes' edges (whatever their text's width): along a row from the
    # right edge to the left edge, and from a row's last box down to the next row's first
    for (i, a), (k, b) in zip(boxes, boxes[1:]):
        same_row = i == k
        ax.annotate("", xy=(0.0, 0.5) if same_row else (0.5, 1.0), xycoords=b.get_bbox_patch(),
                    xytext=(1.0, 0.5) if same_row else (0.5, 0.0), textcoords=a.get_bbox_patch(),
                    arrowprops=dict(arrowstyle="->", color="0.3", lw=1.0, shrinkA=2, shrinkB=2,
                                    connectionstyle="arc3" if same_row else "angle3,angleA=-90,angleB=180"))
