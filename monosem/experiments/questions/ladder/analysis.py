"""The ladder read from its records: finding 1b rung by rung (:func:`rung_verdicts`, the page's
claims :func:`ladder_claims`), the table of every rung's networks (:func:`ladder_frame`), and what
the gap is made of, cluster by cluster (:func:`gap_frame`, :func:`gap_by_link`,
:func:`gap_robust`, :func:`oracle_failures`)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ....profiles import Profile, get_profile
from ....tables import span
from ...cache import Job
from ...estimate import core_seconds
from ...families.networks import MLP_REGLU, MLP_RELU
from ...verdicts import Claim, Comparison, best_of, compare, scored_iteration, verdict_label
from ..sample_efficiency import ORACLE_FACTOR, ORACLES
from .cells import LadderSizes, Rung, ladder_sizes, rung_of

__all__ = ["STOP_REASONS", "rung_records", "rung_verdicts", "network_summary", "ladder_frame", "under_trained", "ladder_claims", "gap_frame", "gap_by_link",
           "ONE_CLUSTER_SHARE", "gap_robust", "ORACLE_FAIL_FACTOR", "oracle_failures"]

#: how an A.2 network ends (``methods.stop_reason``): a network at the update cap is under-trained
STOP_REASONS = ("target", "plateau", "cap")


def rung_records(records: Mapping[Job, Mapping[str, Any]], sizes: LadderSizes, rung: Rung, K: int) -> dict:
    """The records of ``rung`` at ``K``: its networks and both oracles at its n."""
    return {j: r for j, r in records.items()
            if j.K == K and (rung_of(j, sizes) == rung or (j.method in ORACLES and j.n == rung.n))}


def rung_verdicts(records: Mapping[Job, Mapping[str, Any]], profile: str | Profile, K: int,
                  network: str | None = None) -> list[tuple[Rung, Comparison]]:
    """Finding 1b on every rung at ``K`` that has a network and an oracle: the rung's best MLP
    (the lower mean of its networks, or ``network``) / the better oracle at the rung's n (the lower
    mean of :data:`ORACLES`, RFM by its best iteration), on the means and run by run
    (:func:`~..verdicts.compare`, threshold :data:`ORACLE_FACTOR`)."""
    sizes = ladder_sizes(profile)
    out = []
    for rung in sizes.rungs if sizes else ():
        verdict = _rung_verdict(rung_records(records, sizes, rung, K), rung, K, network)
        if verdict is not None:
            out.append((rung, verdict))
    return out


def _rung_verdict(own: Mapping[Job, Mapping[str, Any]], rung: Rung, K: int, network: str | None) -> Comparison | None:
    """Finding 1b on one rung from its own records (:func:`rung_records`); ``None`` without a
    network or an oracle."""
    best = best_of(own, [network] if network else (MLP_REGLU, MLP_RELU), K, rung.n)
    oracle = best_of(own, ORACLES, K, rung.n)
    if best is None or oracle is None:
        return None
    return compare(own, "1b", best, oracle, K, rung.n, threshold=ORACLE_FACTOR)


def _absent_networks(records: Mapping[Job, Mapping[str, Any]], sizes: LadderSizes, rung: Rung, K: int) -> str:
    """The networks ``rung`` declares (ReGLU, and ReLU where it trains) with no recorded run at
    ``K``, in words ("" when every one has one): a rung's "best MLP" is then the best of fewer."""
    have = {j.method for j in records if j.K == K and rung_of(j, sizes) == rung}
    return " and ".join(m.removeprefix("mlp-") for m in rung.networks if m not in have)


def network_summary(nets: Mapping[Job, Mapping[str, Any]], verdict: Comparison) -> tuple[dict[str, Any], pd.Series]:
    """One network's row of a finding 1b table from its runs' records ``nets`` and its verdict:
    the runs, the ratio of the means, the runs within the threshold, the median updates and final
    training MSE over the A.2 target, the verdict, every run's ratio (and which runs), the means
    compared and the one-core hours per network; and how many runs stopped by each rule."""
    ms = [r["metrics"] for r in nets.values()]
    target = next(iter(nets)).spec.target_mse
    core = [c for c in (core_seconds(r) for r in nets.values()) if c is not None]
    row = {"runs": verdict.runs, "MLP / oracle": verdict.mean_ratio, f"within {ORACLE_FACTOR:g}×": f"{verdict.wins} of {verdict.runs}",
           "updates": int(np.median([m["stop_step"] for m in ms])),
           "train MSE / target": float(np.median([m["train_mse"] for m in ms])) / target,
           "verdict": verdict_label(verdict.status, verdict.runs), "per run": ", ".join(f"{x:.2f}" for _, x in verdict.ratios),
           "run ids": ", ".join(str(r) for r, _ in verdict.ratios), "test MSE": verdict.mean_a,
           "better oracle": verdict.b.removeprefix("oracle-"), "oracle MSE": verdict.mean_b,
           "core hours per network": float(np.mean(core)) / 3600 if core else float("nan")}
    return row, pd.Series([m.get("stop_reason") for m in ms]).value_counts()


def ladder_frame(records: Mapping[Job, Mapping[str, Any]], profile: str | Profile) -> pd.DataFrame:
    """One row per (K, rung, network): the knob it moves, the network and n, its runs, its mean
    test MSE, the better oracle and its mean over the same runs' data, the ratio of the means
    (finding 1b's measure), every run's own ratio, how many runs stopped by each rule (the update
    cap: under-trained) and after how many updates (the median), the median final training MSE
    over the A.2 target, the one-core hours per
    network, and finding 1b's verdict for that network (:func:`rung_verdicts`)."""
    sizes = ladder_sizes(profile)
    rows = []
    for K in sizes.Ks if sizes else ():
        for i, rung in enumerate(sizes.rungs):
            own = rung_records(records, sizes, rung, K)
            for method in (MLP_REGLU, MLP_RELU):
                nets = {j: r for j, r in own.items() if j.method == method}
                verdict = _rung_verdict(own, rung, K, method) if nets else None
                if not nets or verdict is None:
                    continue
                # what a reader needs first (the ratio, the runs, how the networks stopped, the
                # verdict) leads, so that a narrow page shows it before the table scrolls
                row, stops = network_summary(nets, verdict)
                lead = dict(list(row.items())[:3])
                rows.append({"K": K, "rung": i, "knob": rung.knob, "network": method.removeprefix("mlp-"), "width": rung.width,
                             "batch": rung.batch, "n": rung.n, **lead, **{f"stopped: {s}": int(stops.get(s, 0)) for s in STOP_REASONS},
                             **{k: v for k, v in row.items() if k not in lead}})
    return pd.DataFrame(rows)


def under_trained(frame: pd.DataFrame) -> pd.Series:
    """Whether a row's networks are under-trained: any of its runs stopped at the update cap."""
    return frame["stopped: cap"] > 0


def _per_run_ratios(records, profile: str | Profile, rung: Rung, K: int, method: str) -> list[tuple[Mapping, float]]:
    """``[(record, MLP_r / oracle_r)]`` for the runs of ``method`` on ``rung``, against the better
    oracle of the rung (by mean), as :func:`rung_verdicts` pairs them."""
    sizes = ladder_sizes(profile)
    own = rung_records(records, sizes, rung, K)
    verdict = dict(rung_verdicts(own, profile, K, network=method)).get(rung)
    if verdict is None:
        return []
    nets = {j.run: r for j, r in own.items() if j.method == method}
    return [(nets[run], ratio) for run, ratio in verdict.ratios if run in nets]


def ladder_claims(records: Mapping[Job, Mapping[str, Any]], page: str, profile: str | Profile = "long") -> list[Claim]:
    """Finding 1b on every recorded rung above the ladder's foot (the foot is the profile's own
    Figure 2 verdict), each a row of the verdict box and the status page that names its scale and
    keeps its per-run numbers (:class:`~..verdicts.Claim`)."""
    from ..sample_efficiency import CLAIMS

    sizes = ladder_sizes(profile)
    K = sizes.Ks[0]
    return [Claim.judged(page, CLAIMS["1b"], [c.part(f"K = {K}, {c.a.removeprefix('mlp-')} / {c.b}")],
                         f"K = {K}, {c.a.removeprefix('mlp-')} / {c.b}: {c.evidence}"
                         + (f" ({absent} not recorded yet)" if (absent := _absent_networks(records, sizes, rung, K)) else ""),
                         profile=f"{get_profile(profile).name} ladder (recorded)", width=rung.width, batch=rung.batch, n=rung.n)
            for rung, c in rung_verdicts(records, profile, K) if rung.knob != "start"]


def gap_frame(records: Mapping[Job, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per (gap cell, cluster): the rung's network, the cluster's link, training count,
    the network's test MSE there, the better oracle's (the oracle with the lower overall test MSE,
    RFM at the iteration the "best" rule picks over the whole test set), their ratio and the
    network's units on the cluster."""
    rows = []
    for job, rec in records.items():
        m, net = rec["metrics"], job.spec.network
        it = scored_iteration(m["oracle_rfm_test_mse_by_iteration"], "best")
        rfm = np.asarray(m["oracle_rfm_by_cluster_by_iteration"][it], dtype=float)
        lap = np.asarray(m["oracle_laplace_by_cluster"], dtype=float)
        counts = np.asarray(m["test_count_by_cluster"], dtype=float)
        overall = {name: float(np.average(np.nan_to_num(v), weights=counts)) for name, v in (("RFM", rfm), ("Laplace", lap))}
        better_name = min(overall, key=overall.get)
        better = rfm if better_name == "RFM" else lap
        mlp = np.asarray(m["mlp_by_cluster"], dtype=float)
        for c in range(job.K):
            rows.append({"K": job.K, "network": net.activation, "width": net.width, "batch": net.batch, "n": job.n, "run": job.run,
                         "cluster": c, "link": m["links"][c], "train count": m["train_count_by_cluster"][c],
                         "test count": int(counts[c]), "MLP": mlp[c], "oracle": better[c], "oracle kind": better_name,
                         "MLP / oracle": mlp[c] / better[c], "units": m["units_by_cluster"][c],
                         "specialized units": m["specialized_by_cluster"][c]})
    return pd.DataFrame(rows)


def gap_by_link(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (K, network, width, batch, n) and link: the clusters, the network's and the better
    oracle's test MSE (test-count-weighted means over the clusters and runs), their ratio, the
    share of the network's excess squared error (over the oracle's) that the link's clusters
    carry, and the median units and specialized units per cluster."""
    if frame.empty:
        return frame
    f = frame.assign(w_mlp=frame["MLP"] * frame["test count"], w_or=frame["oracle"] * frame["test count"],
                     excess=(frame["MLP"] - frame["oracle"]) * frame["test count"])
    keys = ["K", "network", "width", "batch", "n"]
    total = f.groupby(keys)["excess"].sum()
    out = []
    for (*key, link), g in f.groupby([*keys, "link"], sort=True):
        mlp, orc = g["w_mlp"].sum() / g["test count"].sum(), g["w_or"].sum() / g["test count"].sum()
        out.append(dict(zip(keys, key)) | {"link": link, "clusters": g["cluster"].nunique(), "runs": g["run"].nunique(),
                                           "MLP": mlp, "oracle": orc, "MLP / oracle": mlp / orc,
                                           "median per-cluster MLP / oracle": g["MLP / oracle"].median(),
                                           "share of the excess": g["excess"].sum() / total[tuple(key)],
                                           "units per cluster": g["units"].median(),
                                           "specialized per cluster": g["specialized units"].median()})
    return pd.DataFrame(out)


#: a cluster that carries more than this share of a run's oracle squared error carries most of it
ONE_CLUSTER_SHARE = 0.5


def gap_robust(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (K, network, width, batch, n) of :func:`gap_frame`: the ratio of the test-count-weighted
    means (finding 1b's measure on these clusters) beside robust ones, the median and quartiles of
    the per-cluster ratios, and, run by run, the cluster that carries most of the oracle's squared
    error: how many runs have one that carries more than :data:`ONE_CLUSTER_SHARE` of their
    oracle's error, the largest such share (its cluster and both scores there), and the ratio of
    means without every run's worst cluster. A mean ratio that rests on one cluster where the
    oracle fails shows it here, also where each run's failure is a different cluster."""
    if frame.empty:
        return frame
    out = []
    keys = ["K", "network", "width", "batch", "n"]
    for key, g in frame.groupby(keys, sort=True):
        err_or = g["oracle"] * g["test count"]
        # each run's worst oracle cluster and its share of that run's oracle error
        worst_idx = err_or.groupby(g["run"]).idxmax()
        shares = err_or[worst_idx].to_numpy() / err_or.groupby(g["run"]).sum().to_numpy()
        top = worst_idx.iloc[int(np.argmax(shares))]
        worst, rest = g.loc[top], g.drop(index=worst_idx.to_numpy())
        q1, med, q3 = g["MLP / oracle"].quantile([0.25, 0.5, 0.75])
        out.append(dict(zip(keys, key)) | {
            "runs": g["run"].nunique(), "clusters": len(g),  # (cluster, run) pairs over the runs
            "ratio of means": float((g["MLP"] * g["test count"]).sum() / err_or.sum()),
            "median per-cluster ratio": float(med), "quartiles": span([q1, q3], ".3g"),
            "clusters with MLP below oracle": int((g["MLP / oracle"] < 1).sum()),
            "runs with one cluster carrying most of the oracle's error": int((shares > ONE_CLUSTER_SHARE).sum()),
            "oracle's worst cluster": f"{int(worst['cluster'])} ({worst['link']}, run {int(worst['run'])})",
            "its share of its run's oracle error": float(shares.max()),
            "MLP there": float(worst["MLP"]), "oracle there": float(worst["oracle"]),
            "ratio of means without each run's worst": float((rest["MLP"] * rest["test count"]).sum()
                                                             / (rest["oracle"] * rest["test count"]).sum()),
        })
    return pd.DataFrame(out)


#: an oracle fails on a cluster where its test MSE there is more than this many times the median
#: of its link's clusters at the same K and n (their typical score; a working fit is within a few x)
ORACLE_FAIL_FACTOR = 10.0


def oracle_failures(frame: pd.DataFrame, factor: float = ORACLE_FAIL_FACTOR) -> pd.DataFrame:
    """Where the better oracle fails, per (K, n, link) of :func:`gap_frame`: the (cluster, run)
    pairs scored (each once, whichever networks were scored on the same data), how many of them
    the oracle fails on (its test MSE there over ``factor`` times the median of the link's
    clusters), the link's median and largest oracle MSE, and the share of the oracle's squared
    error (over every cluster and run at that K and n) that the failed clusters carry."""
    if frame.empty:
        return frame
    u = frame.drop_duplicates(["K", "n", "run", "cluster"])
    err = u["oracle"] * u["test count"]
    failed = u["oracle"] > factor * u.groupby(["K", "n", "link"])["oracle"].transform("median")
    total = err.groupby([u["K"], u["n"]]).sum()
    out = []
    for (K, n, link), g in u.assign(err=err, failed=failed).groupby(["K", "n", "link"], sort=True):
        out.append({"K": K, "n": n, "link": link, "runs": g["run"].nunique(), "(cluster, run) pairs": len(g),
                    "oracle fails": int(g["failed"].sum()), "median oracle MSE": float(g["oracle"].median()),
                    "largest oracle MSE": float(g["oracle"].max()),
                    "share of the oracle's error on failed clusters": float(g.loc[g["failed"], "err"].sum() / total[(K, n)])})
    return pd.DataFrame(out)
