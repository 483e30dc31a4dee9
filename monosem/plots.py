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

__all__ = ["paper_style", "to_numpy", "cluster_colors", "scatter_clusters", "response_by_cluster", "curves"]

_STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "legend.fontsize": 8,
}


@contextmanager
def paper_style() -> Iterator[None]:
    """Matplotlib settings used by every figure of the book (a context manager)."""
    with mpl.rc_context(_STYLE):
        yield


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
