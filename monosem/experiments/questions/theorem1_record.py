"""Theorem 1's dynamics (page 07) as one cell of the result store: the record's schema, the
computation behind it, and the tables, numbers and claims a page reads from it.

The cell (:func:`dynamics_job`) is the method :data:`METHOD` on :class:`PopulationData` (the
largest K of the profile's grid; n = 0: population flows, no samples; the run's seed) with the
profile's :class:`~monosem.profiles.Theorem1Sizes` as its spec. Computing it
(:func:`compute_dynamics`, ``python -m monosem run theorem1 --profile P``) runs every simulation of
:mod:`.theorem1_dynamics` and keeps the numbers of :func:`dynamics_results`; page 07 runs the
same simulations for its figures and stores its record in the same cell. ``python -m monosem
record theorem1 --profile paper`` ships it with the package, where the page reads it
(:func:`recorded_run`) beside its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ...device import get_device
from ...profiles import Profile, Theorem1Sizes, get_profile
from ...tables import span
from ..cache import Job, ResultCache
from ..recorded import load_recorded_cells
from ..registry import register_method, register_rows
from ..sweeps import Figure, register_figure
from . import theorem1_dynamics as dyn
from .theorem1_dynamics import DistanceFit, label_counts

__all__ = ["METHOD", "RECORD_COMMAND", "PopulationData", "dynamics_job", "compute_dynamics", "store", "recorded_run",
           "page_results", "dynamics_results", "recorded_header", "dynamics_tables", "dynamics_numbers", "dynamics_claims",
           "theorem1_rows"]

#: the cell's method
METHOD = "theorem1-dynamics"
#: how the paper profile's cell is computed and shipped with the package
RECORD_COMMAND = "python -m monosem run theorem1 --profile paper && python -m monosem record theorem1 --profile paper"


@dataclass(frozen=True)
class PopulationData:
    """The data of a population-flow cell: the largest number of clusters ``K`` of its grid, no
    samples (``n`` = 0: the flows are over the population), and the ``run`` seeding its neurons."""

    K: int
    n: int
    run: int


def dynamics_job(profile: Profile, seed: int = 0) -> Job:
    """The dynamics cell of ``profile`` with seed ``seed``."""
    sizes = profile.theorem1
    return Job(METHOD, PopulationData(max(sizes.Ks), 0, int(seed)), sizes, profile.name)


def compute_dynamics(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    """Every simulation of page 07 at the cell's sizes and seed, without figures: the record of
    :func:`dynamics_results`."""
    sizes: Theorem1Sizes = job.spec
    seed, device = job.run, get_device()
    summary = dyn.teacher_only_flows(sizes, seed, progress=False).summary
    fit = dyn.distance_fit(summary, sizes.Ks[0])
    cov = dyn.coverage(summary, max(K for K, _ in summary), seed)
    tr = dyn.tracking(sizes, seed, device=device, progress=False)
    fn = dyn.full_network(sizes, tr["omega0"], seed, device=device)
    perturb, _ = dyn.perturbation(sizes, seed)
    return page_results(sizes, summary, fit, cov, tr, fn, perturb)


register_method(METHOD, compute=compute_dynamics)
register_figure(Figure("theorem1", "Theorem 1: the dynamics of Lemmas 7-9 (Section 4.1)", (METHOD,), "theorem1",
                       jobs=lambda P: [dynamics_job(P)]))


def store(job: Job, results: dict[str, Any], seconds: float, cache: ResultCache) -> dict[str, Any]:
    """Keep a page's record of ``job`` (its :func:`page_results`, computed in ``seconds``) in
    ``cache``, as :func:`compute_dynamics` would have."""
    return cache.save(job, results, seconds, device=str(get_device()))


def recorded_run(profile: str = "paper", seed: int = 0) -> dict[str, Any] | None:
    """The package's recorded dynamics cell at ``profile`` (its record: ``metrics``, ``timing``,
    ``machine``, ``profile``), or ``None``."""
    job = dynamics_job(get_profile(profile), seed)
    return load_recorded_cells([job], profile).get(job)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _machine(machine: dict[str, Any]) -> str:
    where = machine.get("accelerator") or f"{machine.get('cpu_count')} CPU cores ({machine.get('torch_threads')} torch threads), no GPU"
    commit = machine.get("git_commit")
    return where + (f", commit {commit}" if commit else "")


def page_results(sizes, summary, fit: DistanceFit, cov, tr, fn, perturb) -> dict[str, Any]:
    """:func:`dynamics_results` from what the page's simulations returned."""
    net = fn["net"]
    return dynamics_results(t_max=sizes.t_max, flows=summary, C_fit=fit.C, coverage=cov,
                            tracking={k: v for k, v in tr.items() if k != "omega0"},
                            full_network=dict(eps=fn["eps"], loss=net.loss, t=net.t, one_cluster=fn["one_cluster"],
                                              interaction_rel_se=net.interaction_rel_se),
                            perturbation=perturb)


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
    chi2 = {K: p for K, (_, p) in label_counts(flows).items()}
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


def recorded_header(record: dict[str, Any]) -> str:
    """One line: a recorded cell's profile, date, machine and wall time."""
    timing = record["timing"]
    return (f"{record['profile']} profile, recorded {timing['finished']} on {_machine(record['machine'])}: "
            f"{_duration(timing['seconds'])} for the whole page")


def dynamics_tables(results: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """A page-07 record's numbers (``payload["results"]``) as tables: ``flows`` (the teacher-only
    flows per (K, R): converged share, median distance to the specialized maximum times R),
    ``coverage`` (Lemma 8: simulated and exact coverage and the two bounds), ``tracking`` (Lemma 9:
    the tracking error per eps) and ``perturbation`` (the one-cluster share per perturbed target
    and alpha)."""
    flows = pd.DataFrame(results["flows"]).rename(columns={"converged": "converged share", "median_distance_times_R": "median distance × R"})
    cov = pd.DataFrame(results["coverage"]["rows"]).rename(columns={"bound": "lower bound", "bound_exp": "exponential bound"})
    tr = results["tracking"]
    tracking = pd.DataFrame({"eps": tr["eps"], "sup tracking error": tr["errors"]})
    if tr.get("invariant"):
        tracking["invariant, relative error"] = tr["invariant"]
    pert = pd.DataFrame(results["perturbation"]).T
    pert.index.name, pert.columns.name = "perturbation", "alpha"
    return {"flows": flows.set_index(["K", "R"]), "coverage": cov.set_index("m"), "tracking": tracking.set_index("eps"),
            "perturbation": pert}


#: the tracking error's log-log slope against eps that Lemma 9 predicts, and the tolerance of the verdict
TRACKING_SLOPE, SLOPE_TOLERANCE = 2.0, 0.25
#: coverage "follows the exact value" when every simulated value is within this of it
COVERAGE_TOLERANCE = 0.05


def dynamics_numbers(results: dict[str, Any]) -> dict[str, str]:
    """The numbers page 07's prose quotes about a record, for ``glue``."""
    flows = pd.DataFrame(results["flows"])
    fn = results["full_network"]
    r_lo, r_hi = flows["R"].min(), flows["R"].max()
    return {"C_fit": f"{results['C_fit']:.3f}", "slope": f"{results['tracking']['slope']:.2f}",
            "R_lo": f"{r_lo:g}", "R_hi": f"{r_hi:g}",
            "dist_lo": f"{flows[flows['R'] == r_lo]['median_distance_times_R'].iloc[0]:.4f}",
            "dist_hi": f"{flows[flows['R'] == r_hi]['median_distance_times_R'].iloc[0]:.4f}",
            "conv_lo": f"{100 * flows[flows['R'] == r_lo]['converged'].min():.0f} %",
            "conv_hi": f"{100 * flows[flows['R'] == r_hi]['converged'].min():.0f} %",
            "chi2_min": f"{min(results['chi2_p'].values()):.3f}",
            "one_best": f"{100 * fn['one_cluster_most_specialized']:.0f} %", "t_best": f"{fn['t_most_specialized']:.0f}",
            "one_end": f"{100 * fn['one_cluster_end']:.0f} %", "m_full": f"{results['tracking']['m']}"}


def dynamics_claims(results: dict[str, Any], page: str, profile: str) -> list:
    """Page 07's rows of the status page, from a record: Lemma 9's O(eps^2) tracking (the log-log
    slope within :data:`SLOPE_TOLERANCE` of 2), Lemma 8's coverage (every simulated value within
    :data:`COVERAGE_TOLERANCE` of the exact one) and Lemma 7's convergence of the teacher-only flow
    to a specialized maximum (every neuron converged by t_max). Each is one simulation: under the
    book's one rule (:func:`~..verdicts.judge`) the most it can be is "indicated (1 run)". The
    scale is the simulated neurons (the width; the full network's for Lemma 9), population flows
    (no batch, no sample; Lemma 9's interaction term on Monte-Carlo points)."""
    from ..verdicts import Claim, Part

    slope = results["tracking"]["slope"]
    rows = results["coverage"]["rows"]
    gap = max(abs(r["simulated"] - r["exact"]) for r in rows)
    conv = [f["converged"] for f in results["flows"]]
    miss_slope, unconverged = abs(slope - TRACKING_SLOPE), 1.0 - min(conv)
    scale = {"profile": profile, "batch": "population flow (no batch)", "n": "population (no sample)"}
    m = results["tracking"].get("m", "not recorded")
    # coverage is simulated at several neuron counts and the flows per (K, R): the largest names the scale
    neurons = f"up to {max(r['m'] for r in rows)} neurons" if all("m" in r for r in rows) else "not recorded"
    flow_m = f"{max(f['m'] for f in results['flows'])} neurons" if all("m" in f for f in results["flows"]) else "not recorded"
    return [
        Claim.judged(page, "Lemma 9: the network tracks the teacher-only flow to O(ε²)",
                     [Part("distance of the log-log slope from 2", miss_slope, (miss_slope,), high=SLOPE_TOLERANCE, closed=True)],
                     f"log-log slope {slope:.2f} (Lemma 9: 2)", width=m,
                     **scale | {"n": f"{results['tracking']['n_mc']} Monte-Carlo points per cluster"
                                if "n_mc" in results["tracking"] else scale["n"]}),
        Claim.judged(page, "Lemma 8: neurons cover every cluster at the i.i.d. rate",
                     [Part("largest gap to the exact coverage", gap, (gap,), high=COVERAGE_TOLERANCE, closed=True)],
                     f"simulated coverage within {gap:.3f} of the exact value", width=neurons, **scale),
        Claim.judged(page, "Lemma 7: a neuron's teacher-only flow converges to a one-cluster maximum",
                     [Part("share of neurons not converged", unconverged, (unconverged,), high=0.0, closed=True)],
                     f"{span([100 * c for c in conv], '.0f', ' %')} of neurons converged by t_max = {results['t_max']:g}",
                     width=flow_m, **scale),
    ]


def theorem1_rows(records: dict) -> list[dict[str, Any]]:
    """The dynamics cells (``{job: record}``) as export rows, one ``section`` per experiment:
    ``flows`` (per K, R), ``coverage`` (per m), ``tracking`` (per epsilon), ``full_network``
    and ``perturbation`` (per target)."""
    rows = []
    for job, rec in records.items():
        res, base = rec["metrics"], {"run": job.run, "key": job.key()}
        rows += [{**base, "section": "flows", **f} for f in res["flows"]]
        rows += [{**base, "section": "coverage", "K": res["coverage"]["K"], **r} for r in res["coverage"]["rows"]]
        tr = res["tracking"]
        rows += [{**base, "section": "tracking", "K": tr["K"], "R": tr["R"], "m": tr["m"], "T": tr["T"], "eps": e,
                  "tracking_error": err, "slope": tr["slope"]} for e, err in zip(tr["eps"], tr["errors"])]
        rows.append({**base, "section": "full_network", **res["full_network"]})
        rows += [{**base, "section": "perturbation", "target": k, "alpha": a, "one_cluster_fraction": v}
                 for k, by_alpha in res["perturbation"].items() for a, v in by_alpha.items()]
    return rows


register_rows("theorem1", theorem1_rows)
