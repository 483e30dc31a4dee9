"""A figure's cells computed, read and drawn from the result cache: the curves of Figures 2, 4
and 6 in the paper's style, or a question's own panels (:func:`~.registry.register_plot`)."""

from __future__ import annotations

import os
from typing import Sequence

import matplotlib.pyplot as plt

from .. import plots
from ..profiles import Profile, get_profile
from ..tables import plural, span
from .cache import ResultCache
from .registry import PLOTS, discover, method_of
from .results import aggregate
from .sweeps import figure_of, sweep

__all__ = ["plot_figure", "cached_records", "run_figure"]


def cached_records(figure: str, profile: str | Profile, cache: ResultCache, **select) -> dict:
    """``{job: record}`` for every cached cell of ``figure`` (missing cells are left out)."""
    jobs = list(dict.fromkeys(sweep(figure, profile, **select)))
    done, _ = cache.status(jobs)  # damaged files are moved aside (with a warning) and left out
    return {job: cache.load(job) for job in done}


def run_figure(
    figure: str,
    profile: str | Profile,
    *,
    cache: ResultCache | None = None,
    executor: str | None = None,
    n_jobs: int | None = None,
    progress: bool = True,
    slurm: dict | None = None,
    **select,
) -> dict:
    """Compute every missing cell of ``figure`` at ``profile`` (resumable) and return all records.

    By default a GPU runs the cells in-process (the MLP cells of one activation as one stack) and a
    CPU spreads them over a pool of up to two processes. The network cells (a method that trains
    stacks) run first, so the cells that read a trained network (Figure 4's gated cells) find it in
    the cache.
    """
    from ..device import get_device
    from .methods import compute_many, plan
    from .runner import run_jobs

    cache = cache or ResultCache()
    if n_jobs is None:
        n_jobs = 1 if get_device().type == "cuda" else max(1, min(2, os.cpu_count() or 1))
    executor = executor or ("inprocess" if n_jobs == 1 else "process")
    jobs = sweep(figure, profile, **select)
    records = {}
    networks = {j for j in jobs if method_of(j.method).train_many is not None}
    for phase in ([j for j in jobs if j in networks], [j for j in jobs if j not in networks]):
        records |= run_jobs(phase, compute_many, cache, executor=executor, n_jobs=n_jobs, progress=progress,
                            desc=figure, plan=plan, slurm=dict(slurm or {}))
    return {job: records[job] for job in dict.fromkeys(jobs)}


#: the legend entry of the ring drawn around a network's point where runs stopped at the update cap
CAPPED_LABEL = "ringed: runs at the update cap (under-trained)"


def plot_figure(
    figure: str,
    profile: str | Profile,
    *,
    cache: ResultCache | None = None,
    Ks: Sequence[int] | None = None,
    methods: Sequence[str] | None = None,
    metric: str = "test_mse",
    records: dict | None = None,
    source: str = "",
    rule: str = "best",
) -> plt.Figure:
    """One panel per K (two per row): test MSE against n for every method, the geometric mean over
    runs banded ×/÷ one geometric std (the paper shades mean ± std, which on its log axes reaches
    below zero for a spread as large as the mean), every RFM variant scored by ``rule``
    (:data:`~.verdicts.RFM_RULES`); the legend gives the number of runs behind each curve.

    ``records`` (``{job: record}``, e.g. recorded cells) are drawn instead of the cache's;
    ``source`` is added to the title (e.g. "recorded").
    """
    P = get_profile(profile)
    if records is None:
        records = cached_records(figure, P, cache or ResultCache(), Ks=Ks, methods=methods)
    discover()
    if figure in PLOTS:  # a question module's own panels (e.g. the mixtures of experts of page 10)
        return PLOTS[figure](P, records, source, cache=cache)
    if figure_of(figure).jobs is not None:  # a question's own cells: not curves of test MSE against n
        raise ValueError(f"{figure} has no figure of its own here: its page draws it; its numbers: "
                         f"python -m monosem export {figure} --profile {P.name}")
    points = aggregate(records, metric, rule=rule)
    grid = figure_of(figure).grid(P)
    # one panel per K that has at least one cell (a partial cache draws what it has)
    Ks = [K for K in (Ks or grid.Ks) if any(c.K == K for c in points)]
    if not Ks:
        raise ValueError(f"no results of {figure} at profile {P.name!r} to draw: "
                         f"run `python -m monosem run {figure} --profile {P.name}` first")
    # at most two panels per row, so that a panel stays legible at the page's width
    ncols = min(2, len(Ks))
    nrows = -(-len(Ks) // ncols)
    with plots.paper_style():
        fig, axes = plt.subplots(nrows, ncols, figsize=(plots.PAGE_WIDTH, 2.9 * nrows + 0.9), squeeze=False, layout="constrained")
        for ax, K in zip(axes.flat, Ks):
            _efficiency_panel(ax, K, points, methods or figure_of(figure).methods, figure_of(figure).floor)
        for ax in list(axes.flat)[len(Ks):]:
            ax.set_visible(False)
        runs = _legend_with_runs(fig, axes, points)
        scale = "" if not P.reduced_scale else f" (profile {P.name}: reduced scale)"
        rfm = any(method_of(m).by_iteration for m in runs)
        fig.suptitle(figure_of(figure).title + scale + (f", {source}" if source else "")
                     + (f"\nevery RFM variant: {rule} of iterations 0-3" if rfm else ""))
    return fig


def _efficiency_panel(ax, K: int, points, methods: Sequence[str], floor) -> None:
    """:func:`plot_figure`'s panel of ``K``: each method's test MSE against n (the geometric mean,
    banded ×/÷ the geometric std), a network some of whose runs stopped at A.2's update cap ringed."""
    curves = {}
    for method in methods:
        # on the log axes: the geometric mean, banded ×/÷ the geometric std (the mean where a
        # value is not positive, which a log axis cannot draw anyway)
        pts = sorted((c.n, c.gmean if c.gmean == c.gmean else c.mean, c.gstd)
                     for c in points if c.method == method and c.K == K)
        if pts:
            curves[method] = tuple(zip(*pts))
    styles = {m: method_of(m).style for m in curves}
    plots.efficiency_panel(ax, curves, styles, title=f"K = {K}", noise=floor)
    # a network some of whose runs stopped at A.2's update cap: under-trained, ringed
    for c in points:
        if c.K == K and c.capped and c.method in curves:
            ax.plot([c.n], [c.gmean if c.gmean == c.gmean else c.mean], ls="none", marker="o", ms=10, mfc="none",
                    mec="0.15", mew=1.0, label=CAPPED_LABEL)


def _legend_with_runs(fig, axes, points) -> dict[str, set[int]]:
    """One legend below the panels: every method that appears in any panel, once, with the number
    of runs behind its curves; returns those numbers by method."""
    runs: dict[str, set[int]] = {}
    for c in points:
        runs.setdefault(c.method, set()).add(c.runs)
    legend = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    methods_of = {method_of(m).label: m for m in runs}
    labels = [label if label == CAPPED_LABEL else _with_runs(label, methods_of.get(label, label), runs) for label in legend]
    fig.legend(list(legend.values()), labels, loc="outside lower center", ncol=2)
    return runs


def _with_runs(label: str, method: str, runs: dict[str, set[int]]) -> str:
    """A legend label with the number of runs behind ``method``'s curve (a range where cells differ)."""
    counts = sorted(runs.get(method, ()))
    if not counts:
        return label
    return f"{label} ({span(counts)} {plural('run', counts[-1])})"

