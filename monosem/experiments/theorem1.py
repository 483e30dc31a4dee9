"""Theorem 1's dynamics page (07) as a record: the text summary of its numbers at one profile.

The page builds the numbers (teacher-only flows, the C/R fit, label uniformity, coverage, Lemma 9
tracking, the full network, the perturbed targets); :func:`format_dynamics_summary` prints a
recorded payload (see :mod:`monosem.experiments.recorded`) so that the book, built at the cpu
profile, can show the paper profile's numbers beside its own.
"""

from __future__ import annotations

from typing import Any

__all__ = ["format_dynamics_summary", "RECORD_COMMAND"]

RECORD_COMMAND = "papermill notebooks/07_theorem1_dynamics.ipynb /tmp/07.ipynb -p profile paper -p record True"


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _machine(machine: dict[str, Any]) -> str:
    where = machine.get("accelerator") or f"{machine.get('cpu_count')} CPU cores ({machine.get('torch_threads')} torch threads), no GPU"
    commit = machine.get("git_commit")
    return where + (f", commit {commit}" if commit else "")


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
