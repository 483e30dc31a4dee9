"""Finding 1b at the paper's scale: what closes the MLP's gap to the per-cluster oracle at K = 50.

Figure 2's headline is that MLPs come "remarkably close" to the per-cluster oracles when the
clusters are many (Section 3.2). The ``long`` profile trains networks a quarter of the paper's
(width 1 024 and batch 1 024 against Appendix A.2's 4 096 / 4 096) at the paper's two smallest
training sizes, and there the best MLP stays several times the better oracle at K = 50. This
module declares the ladder that separates the candidate causes: starting from the ``long``
profile's network it moves **one knob at a time** to the paper's network, under the A.2 protocol
unchanged (its rates, 20 000-200 000 updates, stopping rules, kept checkpoint):

1. width 1 024 -> 2 048 -> 4 096 at batch 1 024, n = 50 000;
2. batch 1 024 -> 4 096 at width 4 096 (the paper's network), n = 50 000;
3. the paper's network at n = 100 000 and 200 000.

ReGLU (the better MLP of Figure 2) on every rung and ReLU on the paper's network and at the foot
(Figure 2's own ReLU cell, for the same network's comparison across scales); K = 50 the
question, K = 10 (where the MLP already matches the oracle) the control. The per-cluster oracles
(RFM and Laplace) have five runs at every n of the ladder; the networks run 0 on every rung and,
at K = 50, runs 1-4 where run 0 turned: the widest network at batch 1 024 and the paper's network
at n = 50 000 (:attr:`Rung.runs`; the control keeps run 0 above its foot, :attr:`Rung.control_runs`).

Every cell is an ordinary Figure 2 cell (the built-in ``mlp-*`` and ``oracle-*`` methods), so the
first rung *is* the ``long`` profile's Figure 2 network at n = 50 000 (five recorded runs), and an
oracle cell at n = 100 000 or 200 000 run 0 is the regime map's. The rungs beyond it train with
the training step's fastest revision (:data:`~monosem.train.step.FASTEST_STEP_REVISION`: the
same gradient to rounding, other last bits), which each cell's key names.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

import torch

from ...checks import check_choice, check_int
from ...profiles import Profile, get_profile
from ...tables import count, percent, plural, span, thousands
from ...train.step import FASTEST_STEP_REVISION
from ..cache import Job, ResultCache
from ..specs import DataSpec, KernelSpec, NetworkSpec
from ..families.kernels import fit_oracle
from ..families.networks import trained_mlp
from ..methods import dataset, per_cluster_mse, specialization
from ..registry import register_method
from ..sweeps import Figure, method_spec, register_figure, with_solver
from ..estimate import core_seconds
from ..verdicts import MIN_RUNS, Claim, Comparison, best_of, compare, scored_iteration, verdict_label
from .sample_efficiency import ORACLE_FACTOR, ORACLES
from ..families.kernels import ORACLE_LAPLACE, ORACLE_RFM
from ..families.networks import MLP_REGLU, MLP_RELU

__all__ = ["KNOBS", "Rung", "LadderSizes", "ladder_sizes", "ladder_jobs", "rung_of", "ladder_frame", "rung_verdicts",
           "under_trained", "plot_ladder", "ladder_numbers", "run_reading", "ladder_setup", "ladder_claims",
           "ready_gap_jobs",
           "STOP_REASONS", "GAP", "GapSpec", "gap_job", "compute_gap", "gap_jobs", "gap_frame", "gap_by_link", "gap_robust",
           "ONE_CLUSTER_SHARE", "robust_reading", "ORACLE_FAIL_FACTOR", "oracle_failures", "oracle_failure_reading"]

#: what a rung changes against the rung before it
KNOBS = ("start", "width", "batch", "n")
#: how an A.2 network ends (``methods.stop_reason``): a network at the update cap is under-trained
STOP_REASONS = ("target", "plateau", "cap")


@dataclass(frozen=True)
class Rung:
    """One rung of the ladder: a network (width, batch) trained on ``n`` examples, reached from
    the rung before by changing ``knob``; its networks exist for runs ``0 .. runs - 1`` at the
    ladder's question K, and ``control_runs`` (``None``: as many) at its control K;
    ``relu``: the ReLU network trains here too (the paper's network); ``step_revision``: the
    training step's revision (``None``: the profile's, so that the first rung is the profile's
    own Figure 2 cell)."""

    knob: str
    width: int
    batch: int
    n: int
    runs: int = 1
    control_runs: int | None = None
    relu: bool = False
    step_revision: int | None = FASTEST_STEP_REVISION

    def __post_init__(self) -> None:
        check_choice(self.knob, "knob", KNOBS)
        for name in ("width", "batch", "n", "runs"):
            check_int(getattr(self, name), name)
        if self.control_runs is not None:
            check_int(self.control_runs, "control_runs")

    @property
    def networks(self) -> tuple[str, ...]:
        """The networks this rung trains: ReGLU, and ReLU where :attr:`relu`."""
        return (MLP_REGLU, MLP_RELU) if self.relu else (MLP_REGLU,)

    @property
    def label(self) -> str:
        return f"{thousands(self.width)} \u00d7 {thousands(self.batch)}, n = {thousands(self.n)}"


@dataclass(frozen=True)
class LadderSizes:
    """The ladder of a profile: its cluster counts (the question first, the control after), its
    rungs in order, the test-set size and the oracles' runs at every n of the ladder."""

    Ks: tuple[int, ...]
    rungs: tuple[Rung, ...]
    n_test: int
    oracle_runs: int

    @property
    def ns(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(r.n for r in self.rungs))

    def runs(self, rung: Rung, K: int) -> int:
        """How many runs ``rung``'s networks have at ``K``: :attr:`Rung.runs` at the question
        (``Ks[0]``), :attr:`Rung.control_runs` where it sets them at a control K."""
        return rung.runs if K == self.Ks[0] or rung.control_runs is None else rung.control_runs


def _long_ladder() -> LadderSizes:
    """The ``long`` profile's ladder: from its own Figure 2 network to the paper's (Appendix A.2's
    width and batch and its training sizes, read from the ``paper`` profile)."""
    long, paper = get_profile("long").sample_efficiency, get_profile("paper").sample_efficiency
    w0, b0, n0 = long.width, long.batch, max(long.ns)
    W, B = paper.width, paper.batch
    bigger = tuple(n for n in paper.ns if n > n0)
    # the foot is Figure 2's own cell, where ReLU trains beside ReGLU: ReLU's point there is the
    # same network's scale comparison with the paper's network, at no cost
    # five runs where run 0 turned at K = 50: the widest network at the long profile's batch (the
    # lowest ratio of run 0) and the paper's network (the batch step that raised it again); the
    # control K keeps run 0 above its foot
    rungs = (Rung("start", w0, b0, n0, runs=long.runs, relu=True, step_revision=None),
             *(Rung("width", w, b0, n0, runs=5 if w == W else 1, control_runs=1) for w in (2 * w0, W) if w <= W),
             Rung("batch", W, B, n0, runs=5, control_runs=1, relu=True),
             *(Rung("n", W, B, n, relu=True) for n in bigger))
    return LadderSizes(Ks=(50, 10), rungs=rungs, n_test=long.n_test, oracle_runs=long.runs)


def _smoke_ladder() -> LadderSizes:
    """A ladder of the same shape at the smoke profile's sizes (seconds; for the tests and the
    smoke build of the page)."""
    se = get_profile("smoke").sample_efficiency
    w0, b0, n0 = se.width, se.batch // 4, min(se.ns)
    rungs = (Rung("start", w0, b0, n0, relu=True, step_revision=None), Rung("width", 2 * w0, b0, n0),
             Rung("batch", 2 * w0, 4 * b0, n0, relu=True), Rung("n", 2 * w0, 4 * b0, max(se.ns), relu=True))
    return LadderSizes(Ks=(10,), rungs=rungs, n_test=se.n_test, oracle_runs=1)


_LADDERS = {"smoke": _smoke_ladder, "long": _long_ladder}


def ladder_sizes(profile: str | Profile) -> LadderSizes | None:
    """The ladder of ``profile`` (``None`` where the profile declares none)."""
    P = get_profile(profile)
    make = _LADDERS.get(P.name)
    return make() if make is not None else None


def _network_job(P: Profile, method: str, rung: Rung, K: int, run: int, n_test: int) -> Job:
    spec = method_spec(method, P, (rung.width, rung.batch))
    if rung.step_revision is not None:
        spec = dataclasses.replace(spec, step_revision=int(rung.step_revision))
    return Job(method, _data(K, rung.n, run, n_test), spec, P.name)


def _data(K: int, n: int, run: int, n_test: int) -> DataSpec:
    return DataSpec(int(K), int(n), int(run), int(n_test))


def ladder_jobs(P: Profile) -> list[Job]:
    """The ladder's cells at ``P``, cheapest first within each K: the oracles at every n, then run
    0 of every rung's networks, then the further runs (so that one worker going down the list
    fills every rung before it repeats one)."""
    sizes = ladder_sizes(P)
    if sizes is None:
        return []
    jobs: list[Job] = []
    for K in sizes.Ks:
        for n in sizes.ns:
            for r in range(sizes.oracle_runs):
                data = _data(K, n, r, sizes.n_test)
                jobs += [Job(m, data, with_solver(method_spec(m, P), m, data), P.name) for m in ORACLES]
        top = max(sizes.runs(rung, K) for rung in sizes.rungs)
        for run in range(top):
            for rung in sizes.rungs:
                if run < sizes.runs(rung, K):
                    jobs += [_network_job(P, m, rung, K, run, sizes.n_test) for m in rung.networks]
    return list(dict.fromkeys(jobs))


register_figure(Figure("ladder", "Finding 1b's scale ladder: width, batch and n from the long profile's network to the paper's",
                       (ORACLE_RFM, ORACLE_LAPLACE, MLP_REGLU, MLP_RELU), ladder_sizes, jobs=ladder_jobs))


def rung_of(job: Job, sizes: LadderSizes) -> Rung | None:
    """The rung a network cell belongs to (``None`` for an oracle or a cell off the ladder)."""
    spec = job.spec
    if not job.method.startswith("mlp-"):
        return None
    for rung in sizes.rungs:
        if (spec.width, spec.batch, job.n) == (rung.width, rung.batch, rung.n):
            return rung
    return None


def _rung_records(records: Mapping[Job, Mapping[str, Any]], sizes: LadderSizes, rung: Rung, K: int) -> dict:
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
        verdict = _rung_verdict(_rung_records(records, sizes, rung, K), rung, K, network)
        if verdict is not None:
            out.append((rung, verdict))
    return out


def _rung_verdict(own: Mapping[Job, Mapping[str, Any]], rung: Rung, K: int, network: str | None) -> Comparison | None:
    """Finding 1b on one rung from its own records (:func:`_rung_records`); ``None`` without a
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
            own = _rung_records(records, sizes, rung, K)
            for method in (MLP_REGLU, MLP_RELU):
                nets = {j: r for j, r in own.items() if j.method == method}
                verdict = _rung_verdict(own, rung, K, method) if nets else None
                if not nets or verdict is None:
                    continue
                ms = [r["metrics"] for r in nets.values()]
                stops = pd.Series([m.get("stop_reason") for m in ms]).value_counts()
                target = next(iter(nets)).spec.target_mse
                core = [core_seconds(r) for r in nets.values()]
                # what a reader needs first (the ratio, the runs, how the networks stopped, the
                # verdict) leads, so that a narrow page shows it before the table scrolls
                rows.append({"K": K, "rung": i, "knob": rung.knob, "network": method.removeprefix("mlp-"), "width": rung.width,
                             "batch": rung.batch, "n": rung.n, "runs": verdict.runs, "MLP / oracle": verdict.mean_ratio,
                             f"within {ORACLE_FACTOR:g}×": f"{verdict.wins} of {verdict.runs}",
                             **{f"stopped: {s}": int(stops.get(s, 0)) for s in STOP_REASONS},
                             "updates": int(np.median([m["stop_step"] for m in ms])),
                             "train MSE / target": float(np.median([m["train_mse"] for m in ms])) / target,
                             "verdict": verdict_label(verdict.status, verdict.runs),
                             "per run": ", ".join(f"{x:.2f}" for _, x in verdict.ratios), "test MSE": verdict.mean_a,
                             "better oracle": verdict.b.removeprefix("oracle-"), "oracle MSE": verdict.mean_b,
                             "core hours per network": float(np.mean([c for c in core if c is not None])) / 3600
                             if any(c is not None for c in core) else float("nan")})
    return pd.DataFrame(rows)


def under_trained(frame: pd.DataFrame) -> pd.Series:
    """Whether a row's networks are under-trained: any of its runs stopped at the update cap."""
    return frame["stopped: cap"] > 0


def plot_ladder(records: Mapping[Job, Mapping[str, Any]], profile: str | Profile, title: str = ""):
    """One panel per K: every network's MLP / better-oracle ratio against the rung (points: runs,
    beside the rung; line: the ratio of the means; open points: networks stopped at the update
    cap, under-trained; a band: the runs' range, where a rung has the verdict rule's runs), with
    finding 1b's threshold."""
    import matplotlib.pyplot as plt

    from ... import plots

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


def _per_run_ratios(records, profile: str | Profile, rung: Rung, K: int, method: str) -> list[tuple[Mapping, float]]:
    """``[(record, MLP_r / oracle_r)]`` for the runs of ``method`` on ``rung``, against the better
    oracle of the rung (by mean), as :func:`rung_verdicts` pairs them."""
    sizes = ladder_sizes(profile)
    own = _rung_records(records, sizes, rung, K)
    verdict = dict(rung_verdicts(own, profile, K, network=method)).get(rung)
    if verdict is None:
        return []
    nets = {j.run: r for j, r in own.items() if j.method == method}
    return [(nets[run], ratio) for run, ratio in verdict.ratios if run in nets]


# ------------------------------------------------------------------ what the gap is made of
#: the method of a gap cell: a ladder network and both oracles on the same data, scored cluster by cluster
GAP = "ladder-gap"


@dataclass(frozen=True)
class GapSpec:
    """A gap cell: the ``mlp-*`` network ``network`` of a ladder rung and the two per-cluster
    oracles (their kernel specs), all on the cell's data, scored cluster by cluster."""

    network: NetworkSpec
    oracle_rfm: KernelSpec
    oracle_laplace: KernelSpec

    @property
    def label(self) -> str:
        return f"{self.network.activation} {self.network.width} x {self.network.batch} against the oracles, by cluster"


def gap_job(network_job: Job) -> Job:
    """The gap cell of a ladder network cell (same data; the oracles' specs as the ladder's)."""
    P = get_profile(network_job.profile)
    kernels = [with_solver(method_spec(m, P), m, network_job.data) for m in (ORACLE_RFM, ORACLE_LAPLACE)]
    return Job(GAP, network_job.data, GapSpec(network_job.spec, *kernels), network_job.profile)


def _gap_source(gap: Job) -> Job:
    return Job(f"mlp-{gap.spec.network.activation}", gap.data, gap.spec.network, gap.profile)


def compute_gap(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    """Per cluster of the cell's test set: the network's test MSE, each oracle's (RFM at every
    iteration 0-3), the cluster's link and training count, and the network's units (active neurons
    whose best-aligned predictive direction is the cluster's, and the specialized ones among them,
    A_j >= 0.71: page 03's measures). The network comes from the cache, or is trained first."""
    if cache is None:
        raise ValueError("a gap cell reads (or trains into) a cache: its network is kept there")
    src = _gap_source(job)
    mlp = trained_mlp(src, cache)
    model, (_, _, c), (Xte, yte, cte) = dataset(src)
    with torch.no_grad():
        pred = mlp(Xte.to(mlp.W.device, mlp.W.dtype)).double().cpu().numpy()
    K = job.K
    rfm, _ = fit_oracle(Job(ORACLE_RFM, job.data, job.spec.oracle_rfm, job.profile))
    laplace, _ = fit_oracle(Job(ORACLE_LAPLACE, job.data, job.spec.oracle_laplace, job.profile))
    rfm_by_it = [per_cluster_mse(rfm.predict(Xte, groups=cte, iteration=t), yte, cte, K) for t in range(4)]
    units = specialization(mlp, model, by_cluster=True)
    mlp_by_cluster = per_cluster_mse(pred, yte, cte, K)
    return {"test_mse": float(((pred.reshape(-1) - yte.double().numpy().reshape(-1)) ** 2).mean()),
            "links": list(model.link_names),
            "train_count_by_cluster": [int(v) for v in torch.bincount(torch.as_tensor(c), minlength=K)],
            "test_count_by_cluster": [int(v) for v in torch.bincount(torch.as_tensor(cte), minlength=K)],
            "mlp_by_cluster": mlp_by_cluster,
            "oracle_rfm_by_cluster_by_iteration": rfm_by_it,
            "oracle_rfm_test_mse_by_iteration": [float(np.average(np.nan_to_num(v), weights=np.bincount(cte.numpy(), minlength=K)))
                                                 for v in rfm_by_it],
            "oracle_laplace_by_cluster": per_cluster_mse(laplace.predict(Xte, groups=cte), yte, cte, K),
            "n_active": units["n_active"], "frac_A071": units["frac_A071"],
            "units_by_cluster": units["aligned_by_cluster"], "specialized_by_cluster": units["specialized_by_cluster"]}


register_method(GAP, compute=compute_gap)


def gap_jobs(P: Profile) -> list[Job]:
    """A gap cell for every ladder network at the question's K (``Ks[0]``; run 0 of every rung,
    then the further runs, as the ladder). The control K has none: the page takes the gap apart at
    the question's K only, and a gap cell at the foot retrains its network (a network's time for
    nothing the page reads)."""
    sizes = ladder_sizes(P)
    return [gap_job(j) for j in ladder_jobs(P) if j.method.startswith("mlp-") and sizes is not None and j.K == sizes.Ks[0]]


register_figure(Figure("ladder-gap", "What finding 1b's gap is made of: every ladder network against the oracles, cluster by cluster",
                       (GAP,), ladder_sizes, jobs=gap_jobs))


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


def oracle_failure_reading(failures: pd.DataFrame, factor: float = ORACLE_FAIL_FACTOR) -> str:
    """:func:`oracle_failures` in words: at every n, on how many (cluster, run) pairs of each link
    the oracle fails and what share of its squared error those carry."""
    if failures.empty:
        return "not recorded yet"
    parts = []
    for n, g in failures.groupby("n", sort=True):
        where = f"at n = {thousands(int(n))} ({count(g['runs'].max(), 'run')})"
        if g["oracle fails"].sum() == 0:
            parts.append(f"{where} on none of its {int(g['(cluster, run) pairs'].sum())} clusters")
            continue
        links = [f"{int(r['oracle fails'])} of {int(r['(cluster, run) pairs'])} {r['link']}" for _, r in g.iterrows()]
        share = g["share of the oracle's error on failed clusters"].sum()
        parts.append(f"{where} on {', '.join(links[:-1])} and {links[-1]} clusters, which carry {percent(share)} of "
                     "its squared error there")
    return (f"the better oracle fails (its test MSE on a cluster more than {factor:g}\u00d7 the median of that link's "
            "clusters, counted run by run) " + "; ".join(parts))


def robust_reading(robust: pd.DataFrame, sizes: LadderSizes, network: str = "reglu") -> str:
    """The ladder read cluster by cluster (:func:`gap_robust` at one K): ``network``'s median
    per-cluster MLP / oracle on every rung where it is scored, beside its ratio of means; the
    rungs where one cluster carries most of the oracle's squared error, and how far below the
    median's ratio that puts the ratio of means there; and the lowest median."""
    mine = robust[robust["network"] == network] if not robust.empty else robust
    rows = []
    for rung in sizes.rungs:
        hit = mine[(mine["width"] == rung.width) & (mine["batch"] == rung.batch) & (mine["n"] == rung.n)] if not mine.empty else mine
        if not hit.empty:
            rows.append((rung, hit.iloc[0]))
    if not rows:
        return "not recorded yet"

    name = _NAMES.get(network, network)
    text = (f"Cluster by cluster, rung by rung, {name}'s median cluster against its ratio of means: "
            + "; ".join(f"{rung.label}: {r['median per-cluster ratio']:.3g}\u00d7 against {r['ratio of means']:.3g}\u00d7 "
                        f"({count(r['runs'], 'run')})" for rung, r in rows) + ".")
    one = [(rung, r) for rung, r in rows if r["runs with one cluster carrying most of the oracle's error"] > 0]
    if one:
        clusters = sorted({r["oracle's worst cluster"] for _, r in one})
        shares = span([100 * r["its share of its run's oracle error"] for _, r in one], ".0f", " %")
        runs = span([r["runs with one cluster carrying most of the oracle's error"] for _, r in one])
        below = span([r["median per-cluster ratio"] / r["ratio of means"] for _, r in one], ".2g", "\u00d7")
        text += (f" On {len(one)} of these {len(rows)} rungs one cluster carries most of a run's oracle squared error, in {runs} "
                 f"of the rung's runs (the largest share per rung {shares}; cluster {', '.join(clusters)}), and the ratio of "
                 f"means there is {below} below the median cluster's ratio: it measures the oracle's failure on those clusters "
                 "as much as the MLP.")
    rung, best = min(rows, key=lambda x: x[1]["median per-cluster ratio"])
    text += f" The lowest median: {best['median per-cluster ratio']:.3g}\u00d7 at {rung.label} ({count(best['runs'], 'run')})."
    return text


def _chosen_on(records: Mapping[Job, Mapping[str, Any]], frame: pd.DataFrame, sizes: LadderSizes, rung: Rung, K: int,
               best: str) -> str:
    """Where a rung's networks have different runs, which runs chose its best MLP (:func:`best_of`
    ranks them on the runs they share) and the other network's ratio over its own runs; empty
    where they have the same runs."""
    runs = {m: {j.run for j in _rung_records(records, sizes, rung, K) if j.method == m} for m in rung.networks}
    runs = {m: r for m, r in runs.items() if r}
    if len(runs) < 2 or len({frozenset(r) for r in runs.values()}) == 1:
        return ""
    shared = set.intersection(*runs.values())
    i = sizes.rungs.index(rung)
    others = []
    for m in runs:
        row = frame[(frame["K"] == K) & (frame["rung"] == i) & (frame["network"] == m.removeprefix("mlp-"))]
        if m != best and not row.empty:
            others.append(f"{m.removeprefix('mlp-')} is {row['MLP / oracle'].iloc[0]:.2f}\u00d7 over its own "
                          f"{count(int(row['runs'].iloc[0]), 'run')}")
    chosen = f"the {count(len(shared), 'run')} both networks share" if shared else "each network's own runs (they share none)"
    return f" (the better MLP, {best.removeprefix('mlp-')}, is chosen on {chosen}; " + "; ".join(others) + ")"


def _scale(rung: Rung, runs: int) -> str:
    return f"width {thousands(rung.width)}, batch {thousands(rung.batch)}, n = {thousands(rung.n)}, {count(runs, 'run')}"


def ladder_numbers(records: Mapping[Job, Mapping[str, Any]], gaps: Mapping[Job, Mapping[str, Any]],
                   profile: str | Profile = "long") -> dict[str, str]:
    """The numbers and sentences page 04 quotes from the ladder, every one computed from the
    records: how many cells are recorded, the best MLP's ratio to the oracle on every rung at the
    question's K (with its runs and how many of them stopped at the cap), finding 1b's verdict on
    the paper's network with its scale, whether the cap binds, and what the gap is made of."""
    sizes = ladder_sizes(profile)
    declared = ladder_jobs(get_profile(profile))
    out = {"ld_recorded": f"{sum(j in records for j in declared)} of {len(declared)}", "ld_factor": f"{ORACLE_FACTOR:g}"}
    K = sizes.Ks[0]
    frame = ladder_frame(records, profile)
    verdicts = dict(rung_verdicts(records, profile, K))
    steps = []
    for i, rung in enumerate(sizes.rungs):
        c = verdicts.get(rung)
        if c is None:
            steps.append(f"{rung.label}: not recorded yet")
            continue
        rows = frame[(frame["K"] == K) & (frame["rung"] == i) & (frame["network"] == c.a.removeprefix("mlp-"))]
        capped = int(rows["stopped: cap"].sum())
        absent = _absent_networks(records, sizes, rung, K)
        steps.append(f"{rung.label}: {c.mean_ratio:.1f}\u00d7 ({c.a.removeprefix('mlp-')}, {count(c.runs, 'run')}, "
                     f"{capped} at the update cap" + (f"; {absent} not recorded yet" if absent else "") + ")")
    out["ld_steps"] = "; ".join(steps)
    out["ld_control"] = _control_words(frame, sizes)
    out["ld_reading"] = ladder_reading(frame, sizes, K)
    out["ld_run_reading"] = run_reading(records, profile, K)
    if sizes.Ks[-1] != K:
        out["ld_control_reading"] = ladder_reading(frame, sizes, sizes.Ks[-1])
        out["ld_control_run_reading"] = run_reading(records, profile, sizes.Ks[-1])
    paper = next(r for r in sizes.rungs if r.knob == "batch")
    c = verdicts.get(paper)
    out["ld_paper_scale"] = _scale(paper, c.runs if c else 0)
    absent = _absent_networks(records, sizes, paper, K)
    if c is None:
        out["ld_paper_verdict"] = "not computed: the paper's network is not recorded yet at this n"
    elif absent:
        out["ld_paper_verdict"] = (f"{verdict_label(c.status, c.runs)}: the best recorded MLP ({c.a.removeprefix('mlp-')}) is "
                                   f"{c.evidence} ({absent} not recorded yet on this rung: the verdict may change when it is)")
    else:
        out["ld_paper_verdict"] = f"{verdict_label(c.status, c.runs)}: the best MLP is {c.evidence}"
    if c is not None:
        out["ld_paper_verdict"] += _chosen_on(records, frame, sizes, paper, K, c.a)
    # every rung with the paper's width and batch: the paper's network at each n of the ladder
    paper_rungs = [i for i, r in enumerate(sizes.rungs) if (r.width, r.batch) == (paper.width, paper.batch)]
    at_paper = frame[(frame["K"] == K) & frame["rung"].isin(paper_rungs)] if not frame.empty else frame
    if at_paper.empty:
        out["ld_paper_cap"] = "whether A.2's own update cap binds on the paper's network is not known yet (not recorded)"
    else:
        per_n = [f"at n = {thousands(n)}, " + " and ".join(f"{int(r['stopped: cap'])} of {int(r['runs'])} {r['network']}"
                                                   for _, r in rows.iterrows())
                 for n, rows in at_paper.groupby("n", sort=True)]
        binding = [f"{r['network']} at n = {thousands(int(r['n']))}" for _, r in at_paper.iterrows() if r["stopped: cap"] > 0]
        out["ld_paper_cap"] = (f"on the paper's own network and protocol, the networks that stop at A.2's cap of "
                               f"{thousands(_max_steps(profile))} updates: {'; '.join(per_n)}"
                               + (f": the paper's cap binds ({', '.join(binding)}), a finding about the paper's protocol" if binding
                                  else ": the cap does not bind there"))
    capped_rows = frame[(frame["K"] == K) & under_trained(frame)] if not frame.empty else frame
    if capped_rows.empty:
        out["ld_cap"] = "no recorded ladder network at this K stops at the update cap"
    else:
        parts = [f"{r['network']} {sizes.rungs[int(r['rung'])].label} ({int(r['stopped: cap'])} of {int(r['runs'])}, "
                 f"training MSE {r['train MSE / target']:.1f}\u00d7 the target)" for _, r in capped_rows.iterrows()]
        out["ld_cap"] = "the networks that stop at the update cap, under-trained by A.2's own rule: " + "; ".join(parts)
    at_K = gap_frame({j: r for j, r in gaps.items() if j.K == K})
    by_link = gap_by_link(at_K)
    if by_link.empty:
        out["ld_gap"] = out["ld_gap_robust"] = out["ld_gap_ladder"] = out["ld_oracle_fail"] = "not recorded yet"
    else:
        # the highest rung with gap cells, its ReGLU network (the better MLP) where it has one
        mine = by_link[by_link["network"] == "reglu"] if (by_link["network"] == "reglu").any() else by_link
        rung_key = mine[["width", "batch", "n"]].apply(tuple, axis=1)
        last = mine[rung_key == rung_key.max()]
        head = last.iloc[0]
        parts = [f"{r['link']}: {percent(r['share of the excess'])} of the excess, {r['MLP / oracle']:.1f}\u00d7 the oracle, "
                 f"{r['units per cluster']:g} units per cluster ({r['specialized per cluster']:g} specialized)"
                 for _, r in last.sort_values("share of the excess", ascending=False).iterrows()]
        out["ld_gap"] = (f"{head['network']} {thousands(int(head['width']))} \u00d7 {thousands(int(head['batch']))} at n = {thousands(int(head['n']))}, "
                         f"{count(last['runs'].max(), 'run')}: " + "; ".join(parts))
        robust = gap_robust(at_K)
        r = robust[(robust["network"] == head["network"]) & (robust["width"] == head["width"])
                   & (robust["batch"] == head["batch"]) & (robust["n"] == head["n"])].iloc[0]
        worst, share = r["oracle's worst cluster"], r["its share of its run's oracle error"]
        each = "each run's worst cluster" if r["runs"] > 1 else "it"
        without = r["ratio of means without each run's worst"]
        whose = "its run's" if r["runs"] > 1 else "its"
        out["ld_gap_robust"] = (
            f"the median cluster's MLP / oracle is {r['median per-cluster ratio']:.1f}\u00d7 (quartiles {r['quartiles']}), "
            f"against {r['ratio of means']:.1f}\u00d7 for the ratio of means; the MLP is below the oracle on "
            f"{r['clusters with MLP below oracle']} of {r['clusters']} clusters{'' if r['runs'] == 1 else ' (all runs)'}. "
            f"The oracle's worst cluster, {worst}, carries {percent(share)} of {whose} "
            f"squared error (oracle {r['oracle there']:.3g}, MLP {r['MLP there']:.3g}); without {each} the ratio of means "
            f"is {without:.1f}\u00d7")
        out["ld_gap_ladder"] = robust_reading(robust, sizes)
        out["ld_oracle_fail"] = oracle_failure_reading(oracle_failures(at_K))
    return out


_NAMES = {"reglu": "ReGLU", "relu": "ReLU"}


def _control_words(frame: pd.DataFrame, sizes: LadderSizes) -> str:
    """Whether the control K is one where the foot's networks already come within finding 1b's
    factor of the better oracle, with every network's ratio of means and runs."""
    K = sizes.Ks[-1]
    foot = frame[(frame["K"] == K) & (frame["rung"] == 0)] if not frame.empty else frame
    if K == sizes.Ks[0]:
        return "no control: this ladder has one K"
    if foot.empty:
        return "the control (not recorded yet at this profile's network)"
    ratios = "; ".join(f"{_NAMES[r['network']]} {r['MLP / oracle']:.2f}\u00d7 over {count(r['runs'], 'run')}"
                       for _, r in foot.iterrows())
    within = bool((foot["MLP / oracle"] <= ORACLE_FACTOR).all())
    return (f"the control, where this profile's networks {'are' if within else 'are not all'} within finding 1b's "
            f"{ORACLE_FACTOR:g}\u00d7 of the better oracle on the means ({ratios})")


def _rung_words(rung: Rung) -> str:
    return rung.label


def _ratio_words(row: pd.Series | None) -> str:
    if row is None:
        return "not recorded yet"
    return f"{row['MLP / oracle']:.1f}\u00d7 ({count(row['runs'], 'run')})"


def ladder_reading(frame: pd.DataFrame, sizes: LadderSizes, K: int) -> str:
    """What the ladder shows at ``K``, read along each network (like with like: the same network
    on every rung): for every knob, the network's MLP / oracle from the rung before the knob
    moves to each rung it reaches, with its runs; the updates at which the networks stopped where
    the batch moves (a larger batch changes how many updates reach the target); the lowest ratio
    so far; and, where a rung has fewer runs than the verdict rule needs, that its numbers show a
    direction only."""
    at_K = frame[frame["K"] == K] if not frame.empty else frame
    if at_K.empty:
        return "no ladder network is recorded yet at this K"

    def row(network: str, i: int) -> pd.Series | None:
        hit = at_K[(at_K["network"] == network) & (at_K["rung"] == i)]
        return None if hit.empty else hit.iloc[0]

    sentences = []
    for network, name in _NAMES.items():
        rungs = [i for i, r in enumerate(sizes.rungs) if f"mlp-{network}" in r.networks]
        if all(row(network, i) is None for i in rungs):
            continue
        if network == "relu":  # ReLU's rungs are not neighbours: its own path, foot to the paper's network
            sentences.append(f"{name}: " + " \u2192 ".join(f"{_ratio_words(row(network, i))} at {_rung_words(sizes.rungs[i])}"
                                                           for i in rungs))
            continue
        parts = []
        for knob in KNOBS[1:]:
            moved = [i for i in rungs if sizes.rungs[i].knob == knob]
            if not moved:
                continue
            before = max((i for i in rungs if i < moved[0]), default=None)
            path = ([] if before is None else [before]) + moved
            labels = " \u2192 ".join(thousands(getattr(sizes.rungs[i], knob)) for i in path)
            values = " \u2192 ".join(_ratio_words(row(network, i)) for i in path)
            parts.append(f"{knob} {labels}: {values}")
        sentences.append(f"{name}: " + "; ".join(parts))
    text = "Along each network, its MLP / oracle as one knob moves: " + ". ".join(sentences) + "."
    batch = [i for i, r in enumerate(sizes.rungs) if r.knob == "batch"]
    if batch and (here := row("reglu", batch[0])) is not None and (there := row("reglu", batch[0] - 1)) is not None:
        text += (f" Where the batch grows to {thousands(int(here['batch']))}, the ReGLU network stops after {thousands(int(here['updates']))} "
                 f"updates (median; {int(here['stopped: target'])} of {int(here['runs'])} at the training target), against "
                 f"{thousands(int(there['updates']))} at batch {thousands(int(there['batch']))} "
                 f"({int(there['stopped: target'])} of {int(there['runs'])} at the target).")
    best = at_K.loc[at_K["MLP / oracle"].idxmin()]
    text += (f" The lowest so far: {_NAMES[best['network']]} at {_rung_words(sizes.rungs[int(best['rung'])])}, {_ratio_words(best)}, against "
             f"finding 1b's {ORACLE_FACTOR:g}\u00d7.")
    few = {int(r["rung"]) for _, r in at_K.iterrows() if r["runs"] < MIN_RUNS}
    if few:
        text += (f" {len(few)} of the recorded rungs have fewer than {MIN_RUNS} runs: their numbers show a direction on "
                 "those runs, not a verdict, and no cause of a change is tested beyond the knob that moved.")
    return text


def run_reading(records: Mapping[Job, Mapping[str, Any]], profile: str | Profile, K: int, run: int = 0) -> str:
    """The ladder at ``K`` on one run alone (like with like where the rungs have different runs:
    every rung has run 0): along each network, its MLP_r / oracle_r on that run, rung by rung, as
    :func:`rung_verdicts` pairs them, and the rungs where that run is within finding 1b's factor."""
    sentences, within = [], []
    for network, name in _NAMES.items():
        paired = [(rung, dict(c.ratios)) for rung, c in rung_verdicts(records, profile, K, network=f"mlp-{network}")]
        on_run = [(rung, ratios[run]) for rung, ratios in paired if run in ratios]
        if not on_run:
            continue
        sentences.append(f"{name} " + " \u2192 ".join(f"{x:.2f}\u00d7 at {rung.label}" for rung, x in on_run))
        within += [f"{name} at {rung.label} ({x:.2f}\u00d7)" for rung, x in on_run if x <= ORACLE_FACTOR]
    if not sentences:
        return f"no ladder network has run {run} recorded yet at this K"
    return (f"On run {run} alone, the same run on every rung that has it (like with like): " + "; ".join(sentences)
            + f". Within finding 1b's {ORACLE_FACTOR:g}\u00d7 on that run: " + ("; ".join(within) if within else "none") + ".")


def _max_steps(profile: str | Profile) -> int:
    """A.2's update cap at ``profile``."""
    return method_spec(MLP_REGLU, get_profile(profile)).max_steps




def ladder_setup(profile: str | Profile = "long") -> dict[str, str]:
    """The ladder's design in words, from its declaration (for the page's prose): its rungs knob
    by knob, its Ks, the units per cluster of its first and last networks at the question's K,
    the update cap and the runs."""
    sizes = ladder_sizes(profile)
    first, paper = sizes.rungs[0], next(r for r in sizes.rungs if r.knob == "batch")
    widths = [r for r in sizes.rungs if r.knob in ("start", "width")]
    ns = [r.n for r in sizes.rungs if r.knob == "n"]
    K, control = sizes.Ks[0], sizes.Ks[-1]
    net = method_spec(MLP_REGLU, get_profile(profile), (first.width, first.batch))
    return {"ld_K": str(K), "ld_K_control": str(control),
            "ld_units_first": f"{first.width / K:.0f}", "ld_units_paper": f"{paper.width / K:.0f}",
            "ld_batch_share": f"{first.batch / paper.batch:.2g}",
            "ld_width_path": " \u2192 ".join(thousands(r.width) for r in widths), "ld_batch_first": thousands(first.batch),
            "ld_batch_paper": thousands(paper.batch), "ld_width_paper": thousands(paper.width), "ld_n_first": thousands(first.n),
            "ld_ns_more": " and ".join(thousands(n) for n in ns), "ld_min_steps": thousands(net.min_steps), "ld_max_steps": thousands(net.max_steps),
            "ld_oracle_runs": str(sizes.oracle_runs), "ld_paper_runs": str(paper.runs), "ld_first_runs": str(first.runs),
            "ld_more_runs": " and ".join(f"{thousands(r.width)} \u00d7 {thousands(r.batch)}" for r in sizes.rungs[1:] if r.runs > 1),
            "ld_control_runs": _control_runs(sizes)}


def _control_runs(sizes: LadderSizes) -> str:
    """The runs above the foot at the control K, in words."""
    runs = sorted({sizes.runs(r, sizes.Ks[-1]) for r in sizes.rungs[1:]})
    return " or ".join(str(r) for r in runs) + " " + plural("run", runs[-1])


def ladder_claims(records: Mapping[Job, Mapping[str, Any]], page: str, profile: str | Profile = "long") -> list[Claim]:
    """Finding 1b on every recorded rung above the ladder's foot (the foot is the profile's own
    Figure 2 verdict), each a row of the verdict box and the status page that names its scale and
    keeps its per-run numbers (:class:`~..verdicts.Claim`)."""
    from .sample_efficiency import CLAIMS

    sizes = ladder_sizes(profile)
    K = sizes.Ks[0]
    return [Claim.judged(page, CLAIMS["1b"], [c.part(f"K = {K}, {c.a.removeprefix('mlp-')} / {c.b}")],
                         f"K = {K}, {c.a.removeprefix('mlp-')} / {c.b}: {c.evidence}"
                         + (f" ({absent} not recorded yet)" if (absent := _absent_networks(records, sizes, rung, K)) else ""),
                         profile=f"{get_profile(profile).name} ladder (recorded)", width=rung.width, batch=rung.batch, n=rung.n)
            for rung, c in rung_verdicts(records, profile, K) if rung.knob != "start"]


def ready_gap_jobs(P: Profile, cache: ResultCache, Ks: tuple[int, ...] | None = None, foot: bool = True) -> list[Job]:
    """The gap cells at ``P`` that can run now without training a network another worker may be
    training: those whose network is finished in ``cache`` (its result there), and, with
    ``foot``, those of the ladder's foot (the profile's own Figure 2 networks, which the ladder
    never trains: a gap cell retrains its recorded network, a network's time; without ``foot``
    every cell is seconds to minutes of scoring: a foot network's result in the cache, restored
    from its recorded cell, carries no weights)."""
    sizes = ladder_sizes(P)
    first = sizes.rungs[0] if sizes else None
    out = []
    for job in gap_jobs(P):
        src = _gap_source(job)
        at_foot = rung_of(src, sizes) == first
        if (Ks is None or job.K in Ks) and not cache.has(job) and (foot if at_foot else cache.has(src)):
            out.append(job)
    return out
