"""Theorem 1's dynamics page (07): its numbers as one record, and the text summary of a record.

The page runs the flows (teacher-only flows, the C/R fit, coverage, Lemma 9 tracking, the full
network, the perturbed targets); :func:`dynamics_results` turns what it computed into the record
that is saved at a profile (:mod:`monosem.experiments.recorded`), and
:func:`format_dynamics_summary` prints a saved record, so that the book, built at the cpu
profile, can show the paper profile's numbers beside its own. The record's schema is defined
here, once.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from scipy import stats

__all__ = ["dynamics_results", "format_dynamics_summary", "RECORD_COMMAND"]

RECORD_COMMAND = "papermill notebooks/07_theorem1_dynamics.ipynb /tmp/07.ipynb -p profile paper -p record True"


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _machine(machine: dict[str, Any]) -> str:
    where = machine.get("accelerator") or f"{machine.get('cpu_count')} CPU cores ({machine.get('torch_threads')} torch threads), no GPU"
    commit = machine.get("git_commit")
    return where + (f", commit {commit}" if commit else "")


def dynamics_results(
    *,
    t_max: float,
    flows: Mapping[tuple[int, float], Mapping[str, np.ndarray]],
    C_fit: float,
    coverage: Mapping[str, Any],
    tracking: Mapping[str, Any],
    full_network: Mapping[str, Any],
    perturbation: Mapping[tuple[int, float], np.ndarray],
) -> dict[str, Any]:
    """The page's numbers as a JSON-ready record.

    ``flows[K, R]``: the teacher-only neurons' ``conv`` (converged, bool), ``dist`` (distance to
    the maximizer) and ``labels`` (the selected cluster); the chi-square uniformity p-value of the
    converged labels is computed here, per K. ``coverage``: ``K``, ``pool`` (the pooled labels),
    ``ms``, ``simulated``, ``exact``, ``bounds`` (rows of Lemma 8's two bounds). ``tracking``:
    ``K``, ``R``, ``m``, ``n_mc``, ``T``, ``eps``, ``errors``, ``slope``, ``invariant``.
    ``full_network``: ``eps``, ``loss`` (over time), ``t``, ``one_cluster`` (fraction over time),
    ``interaction_rel_se``. ``perturbation[k, alpha]``: the specialization index of every neuron
    for the target (1 - alpha) h3 + alpha h_k.
    """
    Ks = sorted({K for K, _ in flows})
    chi2 = {}
    for K in Ks:
        labels = np.concatenate([np.asarray(s["labels"])[np.asarray(s["conv"])] for (k, _), s in flows.items() if k == K])
        chi2[K] = float(stats.chisquare(np.bincount(labels, minlength=K)).pvalue)
    ms = [int(m) for m in coverage["ms"]]
    rows = [{"m": m, "simulated": float(coverage["simulated"][m - 1]), "exact": float(coverage["exact"][m - 1]),
             "bound": float(coverage["bounds"][m - 1][0]), "bound_exp": float(coverage["bounds"][m - 1][1])}
            for m in (coverage["K"], 2 * coverage["K"], 4 * coverage["K"]) if m <= ms[-1]]
    loss, t, one = (np.asarray(full_network[k]) for k in ("loss", "t", "one_cluster"))
    drop = loss[0] - loss[-1]
    fitted = drop > 0.05  # a fitting phase: the loss falls by more than 0.05 over the run
    i_half = int(np.argmax(loss < loss[0] - 0.5 * drop))
    i_best = int(np.argmax(one))  # Theorem 1's T_delta at this eps: the most specialized time
    alphas = sorted({a for _, a in perturbation})
    return {
        "t_max": float(t_max),
        "flows": [
            {"K": int(K), "R": float(R), "m": int(np.asarray(s["conv"]).size), "converged": float(np.mean(s["conv"])),
             "median_distance_times_R": float(np.median(np.asarray(s["dist"])[np.asarray(s["conv"])]) * R) if np.any(s["conv"]) else None}
            for (K, R), s in flows.items()
        ],
        "C_fit": float(C_fit),
        "chi2_p": chi2,
        "coverage": {"K": int(coverage["K"]), "pool": int(np.asarray(coverage["pool"]).size), "rows": rows},
        "tracking": {"K": int(tracking["K"]), "R": float(tracking["R"]), "m": int(tracking["m"]), "n_mc": int(tracking["n_mc"]),
                     "T": float(tracking["T"]), "eps": [float(e) for e in tracking["eps"]],
                     "errors": [float(e) for e in tracking["errors"]], "slope": float(tracking["slope"]),
                     "invariant": [float(v) for v in tracking["invariant"]]},
        "full_network": {"eps": float(full_network["eps"]), "loss_start": float(loss[0]), "loss_end": float(loss[-1]),
                         "t_half_drop": float(t[i_half]) if fitted else None,
                         "interaction_rel_se": float(full_network["interaction_rel_se"]),
                         "t_most_specialized": float(t[i_best]), "one_cluster_most_specialized": float(one[i_best]),
                         "one_cluster_end": float(one[-1])},
        "perturbation": {f"h{k}": {f"{a:g}": float(np.mean(np.asarray(perturbation[k, a]) > 0.99)) for a in alphas}
                         for k in sorted({k for k, _ in perturbation})},
    }


def format_dynamics_summary(payload: dict[str, Any] | None) -> str:
    """A few lines of text for a recorded page-07 payload; a how-to line when there is none."""
    if payload is None:
        return f"not recorded yet; to record it, run\n  {RECORD_COMMAND}"
    r = payload["results"]
    lines = [
        f"{payload['profile']} profile, recorded {payload['recorded']} on {_machine(payload['machine'])}: "
        f"{_duration(payload['seconds'])} for the whole page",
        f"teacher-only flows (t_max = {r['t_max']:g}):",
        "   K      R     m  converged  median distance x R",
    ]
    for row in r["flows"]:
        med = "-" if row["median_distance_times_R"] is None else f"{row['median_distance_times_R']:.4f}"
        lines.append(f"  {row['K']:2d} {row['R']:6g} {row['m']:5d}  {row['converged']:9.3f}  {med:>19}")
    lines.append(f"fitted C = {r['C_fit']:.3f} (Lemma 5: C -> 1)")
    lines.append("chi-square p-value of uniform labels: " + ", ".join(f"K = {K}: {p:.3f}" for K, p in r["chi2_p"].items()))
    cov = r["coverage"]
    for row in cov["rows"]:
        lines.append(
            f"coverage, K = {cov['K']}, m = {row['m']:3d}: simulated {row['simulated']:.3f}, exact {row['exact']:.3f}, "
            f"bounds {row['bound']:.3f} >= {row['bound_exp']:.3f}"
        )
    tr = r["tracking"]
    errs = ", ".join(f"{e:.0e}: {err:.2e}" for e, err in zip(tr["eps"], tr["errors"]))
    lines.append(
        f"Lemma 9 tracking (K = {tr['K']}, R = {tr['R']:g}, m = {tr['m']}, {tr['n_mc']} points per cluster, "
        f"T = {tr['T']:.1f}): eps -> error {errs}; slope {tr['slope']:.2f} (Lemma 9: 2)"
        + (f"; invariant kept to {max(tr['invariant']):.0e} (relative)" if tr.get("invariant") else "")
    )
    fn = r["full_network"]
    half = "no fitting phase" if fn["t_half_drop"] is None else f"half of the drop by t = {fn['t_half_drop']:.0f}"
    lines.append(
        f"full network (eps = {fn['eps']:g}): loss {fn['loss_start']:.3f} -> {fn['loss_end']:.3f}, {half}; "
        f"one-cluster neurons {fn['one_cluster_most_specialized']:.2f} at t = {fn['t_most_specialized']:.0f}, "
        f"{fn['one_cluster_end']:.2f} at the end (interaction s.e. {fn['interaction_rel_se']:.1g})"
    )
    for name, row in r["perturbation"].items():
        lines.append(f"target (1 - alpha) h3 + alpha {name}, one-cluster fraction: " + ", ".join(f"alpha {a}: {v:.2f}" for a, v in row.items()))
    return "\n".join(lines)
