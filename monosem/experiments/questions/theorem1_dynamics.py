"""Theorem 1's dynamics (page 07): the simulations of Lemmas 7-9, their figures and their checks
in words.

The simulations: the teacher-only flows and their checks (:func:`teacher_only_flows`), Lemma 5's
C/R fit (:func:`distance_fit`), Lemma 8's coverage (:func:`coverage`), Lemma 9's tracking
(:func:`tracking`), the full network (:func:`full_network`) and the perturbed targets
(:func:`perturbation`), each with its plot. What they compute is kept as one cell of the result
store, whose record, tables and claims are :mod:`.theorem1_record`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from ... import plots, theory
from ...progress import progress_bar

__all__ = ["FlowCheck", "DistanceFit", "flow_grid", "teacher_only_flows", "plot_flow", "distance_fit", "plot_distance_fit",
           "converged_labels", "label_counts", "plot_label_counts", "coverage", "plot_coverage", "tracking", "plot_tracking",
           "full_network", "plot_full_network", "perturbation", "plot_perturbation", "distance_fit_text", "coverage_text",
           "tracking_text", "full_network_text", "summary_text"]


# ------------------------------------------------------------------- the page's simulations
@dataclass(frozen=True)
class FlowCheck:
    """The teacher-only flows of page 07 (Lemma 7): per (K, R) the flow of ``m`` fresh neurons
    (:func:`~monosem.theory.teacher_only_flow`) and what is checked of it."""

    flows: dict
    summary: dict  # (K, R) -> {"conv", "dist", "labels"}: converged, distance to the maximizer, selected cluster
    table: pd.DataFrame


def flow_grid(sizes) -> list[tuple[int, float]]:
    """The (K, R) of the teacher-only flows: every R at the first K, and the second R at every other K."""
    return [(sizes.Ks[0], R) for R in sizes.Rs] + [(K, sizes.Rs[min(1, len(sizes.Rs) - 1)]) for K in sizes.Ks[1:]]


def teacher_only_flows(sizes, seed: int, progress: bool = True) -> FlowCheck:
    """Lemma 7's flow of ``sizes.m`` random neurons at every (K, R) of :func:`flow_grid` (fresh
    neurons for every (K, R), seed ``seed + 100 i``), and per (K, R) the lemma's checks: the sign of
    zeta u stays positive, zeta Phi rises, the share of neurons within 1e-3 of a specialized maximum
    by ``t_max``, the share with one-cluster index above 0.99, and the median distance times R."""
    t_eval = np.concatenate([[0.0], np.geomspace(0.1, sizes.t_max, 160)])
    flows = {}
    for i, (K, R) in enumerate(progress_bar(flow_grid(sizes), desc="teacher-only flows", progress=progress)):
        omega0 = theory.random_directions(sizes.m, K, seed=seed + 100 * i)
        flows[K, R] = theory.teacher_only_flow(omega0, K, R, sizes.t_max, t_eval=t_eval)
    summary, rows = {}, []
    for (K, R), fl in flows.items():
        signed = fl.zeta * fl.phi
        sign_ok = bool(np.all(fl.zeta * fl.u[1:] > 0))
        rise_ok = bool(np.all(np.diff(signed, axis=0) > -1e-9) and np.all(signed >= np.abs(fl.phi[0]) - 1e-12))
        conv = fl.distance_to_maximizer() < 1e-3
        labels, _, dist = fl.final()
        one = theory.specialization_index(fl.omega[-1], K) > 0.99
        summary[K, R] = dict(conv=conv, dist=dist, labels=labels)
        rows.append({"K": K, "R": R, "ζ u > 0": sign_ok, "ζ Φ rises": rise_ok, "converged": conv.mean(),
                     "one-cluster": one.mean(), "median distance × R": np.median(dist[conv]) * R if conv.any() else np.nan})
    return FlowCheck(flows, summary, pd.DataFrame(rows).set_index(["K", "R"]))


def plot_flow(fl, K: int, R: float):
    """Three neurons' cluster correlations rho_c (solid) and b_c / R (dotted) over time, and
    zeta_j u_j(t) of eight neurons."""
    colors = plots.cluster_colors(K)
    with plots.paper_style():
        fig, axes = plots.panel_grid(4, sharex=True, panel_height=2.7)
        for j, ax in enumerate(axes[:3]):
            for c in range(K):
                ax.semilogx(fl.t[1:], fl.rho[1:, j, c], color=colors[c], label=f"$\\rho_{c}$")
                ax.semilogx(fl.t[1:], fl.b[1:, j, c] / R, ":", color=colors[c])
            ax.set(title=f"neuron {j} ($\\zeta = {fl.zeta[j]:+d}$)", xlabel="$t$", ylim=(-1.05, 1.05))
        axes[0].legend(loc="lower left")
        axes[3].loglog(fl.t[1:], (fl.zeta * fl.u)[1:, :8])
        axes[3].set(title=r"$\zeta_j u_j(t) > 0$", xlabel="$t$")
        fig.suptitle(f"teacher-only flow, K = {K}, R = {R:g}")
    return fig


@dataclass(frozen=True)
class DistanceFit:
    """Lemma 5's C/R law at one K: the converged neurons' distances per R, the least-squares C of
    distance = C / R, and the exact distance of the specialized maximum per R."""

    K: int
    Rs: np.ndarray
    distances: list
    C: float
    exact: np.ndarray


def distance_fit(summary: dict, K: int) -> DistanceFit:
    """Fit distance = C / R (through the origin) over the converged neurons of every R at ``K``."""
    Rs = np.array([R for (k, R) in summary if k == K])
    d_by_R = [summary[K, R]["dist"][summary[K, R]["conv"]] for R in Rs]
    inv_R = np.concatenate([np.full(d.size, 1 / R) for d, R in zip(d_by_R, Rs)])
    C = float(np.dot(inv_R, np.concatenate(d_by_R)) / np.dot(inv_R, inv_R))
    t_star = theory.one_cluster_critical_t(Rs)
    return DistanceFit(K, Rs, d_by_R, C, np.sqrt(2 - 2 * np.sqrt(1 - t_star**2 / Rs**2)))


def plot_distance_fit(fit: DistanceFit):
    with plots.paper_style():
        fig, ax = plt.subplots(figsize=(4.2, 3))
        for R, d in zip(fit.Rs, fit.distances):
            ax.plot(np.full(d.size, 1 / R), d, "o", ms=4, alpha=0.5, color="C0")
        grid_inv = np.linspace(0, 1.1 / fit.Rs.min(), 50)
        ax.plot(grid_inv, fit.C * grid_inv, "k--", label=f"fit $C/R$, $C = {fit.C:.3f}$")
        ax.plot(1 / fit.Rs, fit.exact, "r*", ms=10, label=r"$\|\omega^\star - \tau v_c\|$ (Lemma 5)")
        ax.set(xlabel="$1/R$", ylabel=r"$\|\omega(t_{\max}) - \tau v_J\|$", title="converged neurons")
        ax.legend()
    return fig


def converged_labels(summary: dict, K: int) -> np.ndarray:
    """The selected clusters of every converged teacher-only neuron at ``K``, pooled over R."""
    return np.concatenate([np.asarray(s["labels"])[np.asarray(s["conv"])] for (k, _), s in summary.items() if k == K])


def label_counts(summary: dict) -> dict[int, tuple[np.ndarray, float]]:
    """Per K, how many converged neurons select each cluster and the chi-square p-value of
    uniform labels (Lemma 8's premise)."""
    out = {}
    for K in sorted({K for K, _ in summary}):
        counts = np.bincount(converged_labels(summary, K), minlength=K)
        out[K] = counts, float(stats.chisquare(counts).pvalue)
    return out


def plot_label_counts(summary: dict):
    """Per K, how many converged neurons select each cluster, with the chi-square p-value of
    uniform labels (:func:`label_counts`)."""
    counted = label_counts(summary)
    with plots.paper_style():
        fig, axes = plots.panel_grid(len(counted), panel_height=2.8)
        for ax, (K, (counts, p)) in zip(axes, counted.items()):
            ax.bar(range(K), counts, color=plots.cluster_colors(K))
            ax.axhline(counts.sum() / K, color="k", ls="--", lw=0.8)
            ax.set(xlabel="selected cluster $J$", ylabel="neurons", title=f"K = {K}: {counts.sum()} neurons,\n$\\chi^2$ p = {p:.2f}")
    return fig


def coverage(summary: dict, K: int, seed: int) -> dict[str, Any]:
    """Lemma 8 at ``K``: for m = 1 ... min(pool, 6K) neurons drawn from the pooled converged
    labels, the simulated probability that every cluster is covered, the exact value for i.i.d.
    uniform labels and the lemma's two lower bounds (rows of ``bounds``)."""
    pool = converged_labels(summary, K)
    ms = np.arange(1, min(pool.size, 6 * K) + 1)
    return dict(K=K, pool=pool, ms=ms,
                exact=np.array([theory.coverage_probability(int(m), K) for m in ms]),
                bounds=np.array([theory.coverage_lower_bounds(int(m), K) for m in ms]),
                simulated=np.array([theory.empirical_coverage(pool, int(m), K, n_draws=2000, seed=seed) for m in ms]))


def plot_coverage(cov: dict[str, Any]):
    K, ms = cov["K"], cov["ms"]
    with plots.paper_style():
        fig, ax = plt.subplots(figsize=(4.8, 3.2))
        ax.plot(ms, cov["simulated"], "o", ms=4, label=f"simulated neurons (pool of {cov['pool'].size})")
        ax.plot(ms, cov["exact"], "k-", label="exact, i.i.d. uniform labels")
        ax.plot(ms, cov["bounds"][:, 0], "--", label=r"$1 - K(1-1/K)^m$")
        ax.plot(ms, cov["bounds"][:, 1], ":", label=r"$1 - K e^{-m/K}$")
        ax.axvline(K * math.log(K / 0.1), color="grey", lw=0.6)
        ax.set(xlabel="neurons $m$", ylabel="P(all clusters covered)", ylim=(0, 1.02), title=f"K = {K}")
        ax.legend(loc="lower right")
    return fig


def tracking(sizes, seed: int, device=None, progress: bool = True) -> dict[str, Any]:
    """Lemma 9: ``sizes.m_full`` neurons (seed ``seed + 1``) at the first (K, R), trained on the
    population loss from output weights eps, against the teacher-only flow from the same start,
    over the window T in which the teacher-only |u| stays below 2; per eps the sup tracking error
    and the relative error of the invariant ||w||^2 - a^2 = eps^2, and the log-log slope of the
    error against eps (the lemma: 2)."""
    K, R = sizes.Ks[0], sizes.Rs[0]
    omega0 = theory.random_directions(sizes.m_full, K, seed=seed + 1)
    probe = theory.teacher_only_flow(omega0, K, R, sizes.t_max, t_eval=np.linspace(0, sizes.t_max, 4001))
    T = float(probe.t[np.argmax(np.abs(probe.u).max(axis=1) >= 2.0)])
    common = dict(t_eval=np.linspace(0, T, 21), n_mc=sizes.n_mc, seed=seed, device=device, step=0.5)
    errors, invariants = [], []
    for eps in progress_bar(sizes.epsilons, desc="tracking", progress=progress):
        full = theory.two_layer_population_flow(omega0, K, R, eps, T, **common)
        ref = theory.two_layer_population_flow(omega0, K, R, eps, T, interaction=False, **common)
        errors.append(theory.tracking_error(full, ref).max())
        invariants.append(full.invariant_error.max())
    slope = float(np.polyfit(np.log(sizes.epsilons), np.log(errors), 1)[0])
    return dict(K=K, R=R, m=sizes.m_full, n_mc=sizes.n_mc, T=T, eps=sizes.epsilons, errors=errors, slope=slope,
                invariant=invariants, omega0=omega0)


def plot_tracking(tr: dict[str, Any]):
    eps = np.array(tr["eps"])
    with plots.paper_style():
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.loglog(eps, tr["errors"], "o-", label=f"simulated, slope {tr['slope']:.2f}")
        ax.loglog(eps, tr["errors"][0] * (eps / eps[0]) ** 2, "k--", label=r"$\propto \varepsilon^2$")
        ax.set(xlabel=r"$\varepsilon$", ylabel=r"$\sup_{t\leq T}|u-\bar u| + \|\omega-\bar\omega\|$", title=f"Lemma 9, $T = {tr['T']:.0f}$")
        ax.legend()
    return fig


def full_network(sizes, omega0: np.ndarray, seed: int, device=None) -> dict[str, Any]:
    """The whole network (the smallest eps, ``sizes.t_full``) beside the teacher-only flow from
    the same start: the population loss, the output weights, each neuron's distance to its nearest
    +-v_c, and the share of one-cluster neurons over time."""
    K, R, eps = sizes.Ks[0], sizes.Rs[0], min(sizes.epsilons)
    t = np.linspace(0, sizes.t_full, 121)
    net = theory.two_layer_population_flow(omega0, K, R, eps, sizes.t_full, t_eval=t, n_mc=sizes.n_mc, seed=seed, device=device)
    solo = theory.teacher_only_flow(omega0, K, R, sizes.t_full, t_eval=t)
    return dict(K=K, R=R, eps=eps, net=net, solo=solo, d_net=theory.nearest_direction(net.omega, K)[2],
                d_solo=theory.nearest_direction(solo.omega, K)[2],
                one_cluster=(theory.specialization_index(net.omega, K) > 0.99).mean(axis=1))


def plot_full_network(fn: dict[str, Any]):
    net, solo = fn["net"], fn["solo"]
    with plots.paper_style():
        fig, axes = plots.panel_grid(3, panel_height=2.8)
        axes[0].plot(net.t, net.loss)
        axes[0].set(xlabel="$t$", ylabel=r"$\frac{1}{2}\mathbb{E}(f-y)^2$", title="population loss")
        axes[1].semilogy(net.t, np.abs(net.a))
        axes[1].set(xlabel="$t$", ylabel="$|a_j|$", title="output weights")
        axes[2].plot(net.t, fn["d_net"], "-")
        axes[2].set_prop_cycle(None)
        axes[2].plot(solo.t, fn["d_solo"], ":")
        axes[2].axhline(theory.one_cluster_critical_t(fn["R"]) / fn["R"], color="k", lw=0.8)
        axes[2].set(xlabel="$t$", ylabel=r"$\|\omega_j - \tau v_J\|$", title="network (solid),\nteacher-only (dotted)")
    return fig


def perturbation(sizes, seed: int) -> tuple[dict, pd.DataFrame]:
    """Beyond the paper: the teacher-only flow of max(8, m/2) neurons (seed ``seed + 2``) for the
    targets (1 - alpha) h3 + alpha h_k, k = 2, 4: per (k, alpha) every neuron's one-cluster index,
    and a table of the one-cluster share, the converged share and the median index."""
    K, R = sizes.Ks[0], sizes.Rs[0]
    omega0 = theory.random_directions(max(8, sizes.m // 2), K, seed=seed + 2)
    indices, rows = {}, []
    for k in (2, 4):
        for alpha in sizes.alphas:
            pf = theory.teacher_only_flow(omega0, K, R, sizes.t_max, t_eval=[0.0, sizes.t_max], coeffs={3: 1.0 - alpha, k: alpha})
            spec = theory.specialization_index(pf.omega[-1], K)
            indices[k, alpha] = spec
            rows.append({"k": k, "alpha": alpha, "one-cluster": np.mean(spec > 0.99),
                         "converged (|grad| < 1e-6)": np.mean(pf.gradient_norm() < 1e-6), "median one-cluster index": np.median(spec)})
    return indices, pd.DataFrame(rows).set_index(["k", "alpha"])


def plot_perturbation(indices: dict, alphas):
    with plots.paper_style():
        fig, ax = plt.subplots(figsize=(4.5, 3))
        for k, marker in ((2, "o-"), (4, "s-")):
            ax.plot(alphas, [np.mean(indices[k, a] > 0.99) for a in alphas], marker, label=f"$(1-\\alpha) h_3 + \\alpha h_{k}$")
        ax.set(xlabel=r"$\alpha$", ylabel="fraction of one-cluster neurons", ylim=(-0.05, 1.05), title="perturbed targets")
        ax.legend()
    return fig


def _small(v: float) -> str:
    """A relative error as the page prints it: one digit, or ``< 1e-8`` below that."""
    return f"{v:.0e}" if v >= 1e-8 else "< 1e-8"


def distance_fit_text(fit: DistanceFit) -> str:
    """Lemma 5's check in words: the fitted C, and per R the converged neurons' distance x R
    against Lemma 5's exact value."""
    lines = [f"fitted C = {fit.C:.3f} (K = {fit.K}; Lemma 5 predicts C -> 1 as R grows)"]
    for R, d, e in zip(fit.Rs, fit.distances, fit.exact):
        lines.append(f"  R = {R:5g}: {d.size:3d} converged neurons, distance * R in "
                     f"[{d.min() * R:.4f}, {d.max() * R:.4f}],\n             Lemma 5: {e * R:.4f}")
    return "\n".join(lines)


def coverage_text(cov: Mapping[str, Any]) -> str:
    """Lemma 8 at m = K, 2K and 4K neurons: the simulated and exact coverage and the two bounds."""
    K, emp, exact, bounds = cov["K"], cov["simulated"], cov["exact"], cov["bounds"]
    return "\n".join(f"m = {m:3d}: simulated {emp[m - 1]:.3f}, exact {exact[m - 1]:.3f}, bounds {bounds[m - 1, 0]:.3f} >= "
                     f"{bounds[m - 1, 1]:.3f}" for m in (K, 2 * K, 4 * K) if m <= cov["ms"][-1])


def tracking_text(tr: Mapping[str, Any], device: str) -> str:
    """Lemma 9's check in words: per eps the largest tracking error and how well the invariant
    ||w||^2 - a^2 = eps^2 is kept, and the error's log-log slope against eps."""
    lines = [f"K = {tr['K']}, R = {tr['R']:g}, m = {tr['m']}, window T = {tr['T']:.1f}, device {device}"]
    for eps, e, inv in zip(tr["eps"], tr["errors"], tr["invariant"]):
        lines.append(f"  eps = {eps:.0e}: sup_t tracking error {e:.2e},\n    invariant ||w||^2 - a^2 = eps^2 kept to "
                     f"{_small(inv)}\n    (relative; RK4 truncation error)")
    return "\n".join(lines + [f"log-log slope of the tracking error against eps: {tr['slope']:.2f} (Lemma 9: 2)"])


def full_network_text(fn: Mapping[str, Any], m: int) -> str:
    """The full network in words: its loss and when half of the drop happened, how well its
    invariant is kept, and at the most specialized time and at the end the distance of its
    neurons to the nearest +-v_c and its one-cluster share."""
    net, d_net, one = fn["net"], fn["d_net"], fn["one_cluster"]
    drop = net.loss[0] - net.loss[-1]
    i_half = int(np.argmax(net.loss < net.loss[0] - 0.5 * drop))
    i_best = int(np.argmax(one))  # the best time: Theorem 1's T_delta, at this eps
    lines = [f"eps = {fn['eps']:g}, m = {m}: loss {net.loss[0]:.3f} -> {net.loss[-1]:.3f}; "
             + (f"half of the drop by t = {net.t[i_half]:.0f}" if drop > 0.05 else "no fitting phase within t_full"),
             f"invariant ||w||^2 - a^2 = eps^2: largest relative error {_small(net.invariant_error.max())};\n"
             f"Monte-Carlo relative s.e. of the interaction term at the end: {net.interaction_rel_se:.1g}"]
    for name, idx in (("most specialized", i_best), ("end of run", -1)):
        lines.append(f"{name:16s} (t = {net.t[idx]:5.0f}): distance to nearest +-v_c:\n    median {np.median(d_net[idx]):.3f}, "
                     f"max {d_net[idx].max():.3f}; one-cluster index > 0.99: {one[idx]:.2f}")
    return "\n".join(lines)


def summary_text(summary, fit: DistanceFit, tr: Mapping[str, Any], t_max: float) -> str:
    """The page's summary: the share of teacher-only neurons converged by ``t_max``, the fitted C
    and the tracking slope."""
    conv = np.concatenate([s["conv"] for s in summary.values()])
    return (f"teacher-only: {conv.mean():.3f} of {conv.size} neurons converged to a specialized maximum by t = {t_max:g}\n"
            f"fitted C = {fit.C:.3f}; tracking slope = {tr['slope']:.2f}")
