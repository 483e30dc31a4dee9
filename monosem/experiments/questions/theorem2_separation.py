"""The separation experiment that Theorem 2 predicts (Section 4.2): its grid, its result table,
its figure and its findings.

On ``noiseless_routing_mixture(K)`` (d = 2K, clipped-ramp link, noiseless routing), for sample
sizes n = ceil(scale * K^A), compare the test error E(f_hat - f*)^2 of the four estimators of
:mod:`.theorem2_estimators`: the Frobenius-constrained ReLU network (one row per budget factor:
``mlp_B3K``, ...), the isotropic Laplace kernel, the Laplace kernel in the ground-truth AGOP's
metric, and RFM with the empirical AGOP. Every (K, n, estimator) is a cell of the result store:
the figure ``theorem2`` (:func:`separation_jobs`), computed, cached, recorded and exported like
every other figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import NullFormatter

from ...plots import PAGE_WIDTH
from ...profiles import Profile, Theorem2Sizes, get_profile
from ...theory.hermite import clipped_ramp_moments
from ...theory.kernel_bound import kernel_lower_bound
from ...theory.separation import agop_bayes_lower_bound
from ..cache import Job, ResultCache
from ...tables import span, thousands
from ..runner import run_jobs
from ..registry import register_plot, register_rows
from ..sweeps import Figure, register_figure
from .theorem2_estimators import (CELL_METHODS, METHODS, EmpiricalAGOPSpec, FrobeniusMLPConfig, RoutingData, TrueAGOPSpec,
                                  compute_cell)

__all__ = [
    "theorem2_rows",
    "sample_sizes",
    "separation_jobs",
    "run_separation",
    "SeparationResult",
    "rho_sweep",
    "rho_frame",
    "sizes_text",
    "plot_learning_curves",
    "learning_curves_figure",
]


def sample_sizes(K: int, sizes: Theorem2Sizes) -> list[tuple[float, int]]:
    """(A, n) pairs with n = ceil(n_scale * K^A), for every exponent whose n is at most n_max."""
    out = []
    for A in sizes.exponents:
        n = math.ceil(sizes.n_scale * K**A)
        if n <= sizes.n_max:
            out.append((float(A), n))
    return out


@dataclass
class SeparationResult:
    """Rows of (K, A, n, method, test_mse, ...) plus the theory references for each (K, n)."""

    rows: list[dict] = field(default_factory=list)
    sizes: Theorem2Sizes | None = None

    def frame(self) -> pd.DataFrame:
        """The result as a table: one row per (K, A, n), the methods' test MSEs as columns
        (named with spaces for underscores),
        then Lemma 16's bound ("LB (L16)") and Lemma 12's floor (1 - 1/K) Var g ("floor (L12)"),
        indexed by (K, A, n)."""
        rows = []
        for K, A, n in sorted({(r["K"], r["A"], r["n"]) for r in self.rows}):
            row = {"K": K, "A": A, "n": n}
            # spaces for underscores: the headers can wrap in a narrow column
            row |= {r["method"].replace("_", " "): r["test_mse"] for r in self.rows if (r["K"], r["A"], r["n"]) == (K, A, n)}
            row |= {"LB (L16)": kernel_lower_bound(n, K), "floor (L12)": agop_bayes_lower_bound(K)}
            rows.append(row)
        return pd.DataFrame(rows).set_index(["K", "A", "n"])

    def series(self, method: str, A: float) -> tuple[np.ndarray, np.ndarray]:
        """(K values, test MSEs) of ``method`` at exponent ``A``, sorted by K."""
        pts = sorted((r["K"], r["test_mse"]) for r in self.rows if r["method"] == method and r["A"] == A)
        return np.array([p[0] for p in pts]), np.array([p[1] for p in pts])


def _cell_jobs(K: int, n: int, run: int, sizes: Theorem2Sizes, methods, profile: str) -> list[Job]:
    """The cells at one (K, n): the network once per budget factor, then the kernels."""
    data = RoutingData(int(K), int(n), int(run), int(sizes.n_test))
    specs: list[tuple[str, Any]] = []
    if "mlp" in methods:
        specs += [("t2-mlp", FrobeniusMLPConfig(width_per_cluster=sizes.mlp_width_per_cluster, budget_factor=float(factor),
                                                steps=sizes.mlp_steps, lr=sizes.mlp_lr)) for factor in sizes.mlp_budget_factors]
    kernels = {"laplace": ("t2-laplace", None), "rfm_true_agop": ("t2-rfm-true-agop", TrueAGOPSpec(float(sizes.rho_ratio))),
               "rfm_empirical": ("t2-rfm-empirical", EmpiricalAGOPSpec(int(sizes.rfm_iterations)))}
    specs += [kernels[m] for m in methods if m != "mlp"]
    return [Job(name, data, spec, profile) for name, spec in specs]


def separation_jobs(sizes: Theorem2Sizes, *, methods: tuple[str, ...] = METHODS, seed: int = 0, profile: str = "") -> list[Job]:
    """The experiment's cells: every (K, n = ceil(n_scale K^A)) of ``sizes`` (n at most
    ``n_max``) and every estimator of ``methods``, on run ``seed``'s data."""
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"method={m!r} is not allowed; use one of {list(METHODS)}")
    return [job for K in sizes.Ks for _, n in sample_sizes(K, sizes) for job in _cell_jobs(K, n, seed, sizes, methods, profile)]


def _figure_jobs(P: Profile) -> list[Job]:
    return separation_jobs(P.theorem2, profile=P.name)


register_figure(Figure("theorem2", "Theorem 2: kernels against a constrained ReLU network as K and n grow (Section 4.2)",
                       tuple(CELL_METHODS), "theorem2", jobs=_figure_jobs))


def _metrics(jobs: list[Job], cache: ResultCache | None, desc: str) -> dict[Job, dict[str, Any]]:
    """Every job's metrics: from the cache (computing and storing the missing ones), or computed
    here when there is no cache."""
    if cache is None:
        return {job: compute_cell(job) for job in jobs}
    return {job: rec["metrics"] for job, rec in run_jobs(jobs, compute_cell, cache, desc=desc).items()}


def _row_name(job: Job) -> str:
    """The estimator's name in the result table: ``mlp_B3K`` for a network of budget 3K, ..."""
    return f"mlp_B{job.spec.budget_factor:g}K" if job.method == "t2-mlp" else CELL_METHODS[job.method]


def run_separation(sizes: Theorem2Sizes | str = "cpu", *, methods: tuple[str, ...] = METHODS, seed: int = 0,
                   cache: ResultCache | None = None) -> SeparationResult:
    """Every cell of :func:`separation_jobs` (one run per point), through ``cache`` when given (a
    finished cell is never recomputed), as one :class:`SeparationResult`.

    ``"mlp"`` runs once per budget factor of ``sizes.mlp_budget_factors``, in rows named
    ``"mlp_B3K"``, ``"mlp_B6K"``, ... Fits run on :func:`monosem.device.get_device`.
    """
    if isinstance(sizes, str):
        sizes = get_profile(sizes).theorem2
    jobs = separation_jobs(sizes, methods=methods, seed=seed)
    return _result(sizes, jobs, _metrics(jobs, cache, "Theorem 2 separation"))


def _result(sizes: Theorem2Sizes, jobs: list[Job], metrics: dict[Job, dict[str, Any]]) -> SeparationResult:
    """The cells' metrics as one :class:`SeparationResult`, in the order of ``jobs`` (those with
    metrics), each row with its exponent A."""
    A_of = {(K, n): A for K in sizes.Ks for A, n in sample_sizes(K, sizes)}
    result = SeparationResult(sizes=sizes)
    for job in (j for j in jobs if j in metrics):
        m = metrics[job]
        row = {k: v for k, v in m.items() if k != "mlp_bound"}
        row.update(method=_row_name(job), K=job.K, A=A_of[job.K, job.n], n=job.n, mlp_bound=m["mlp_bound"])
        result.rows.append(row)
    return result


def _plot(P: Profile, records: dict, source: str = "", cache=None):
    """``monosem plot theorem2``: the learning curves of the cached (or recorded) cells."""
    result = _result(P.theorem2, separation_jobs(P.theorem2, profile=P.name), {j: rec["metrics"] for j, rec in records.items()})
    if not result.rows:
        raise ValueError(f"no results of theorem2 at profile {P.name!r} to draw: run `python -m monosem run theorem2 --profile {P.name}` first")
    fig = learning_curves_figure(result)
    fig.suptitle("Theorem 2: test error against $n$" + (f" ({source})" if source else ""))
    return fig


def rho_sweep(K: int, n: int, rho_ratios: tuple[float, ...], *, n_test: int = 2048, seed: int = 0,
              cache: ResultCache | None = None) -> list[dict]:
    """Test error of Laplace KRR in the metric M_rho = (alpha/K) P_V + rho I for several rho.

    rho = ratio * alpha / K. Theorem 2's lower bound is uniform in rho: rho = 0 is Lemma 12's
    routing-blind metric, rho -> infinity approaches the isotropic Laplace kernel.
    """
    jobs = [Job("t2-rfm-true-agop", RoutingData(int(K), int(n), int(seed), int(n_test)), TrueAGOPSpec(float(r))) for r in rho_ratios]
    metrics = _metrics(jobs, cache, "rho sweep")
    out = []
    for job, ratio in zip(jobs, rho_ratios):
        row = {k: v for k, v in metrics[job].items() if k != "mlp_bound"}
        row.update(K=K, n=n, rho_ratio=float(ratio), lower_bound=kernel_lower_bound(n, K))
        out.append(row)
    return out


def sizes_text(sizes: Theorem2Sizes, reduced_scale: bool) -> str:
    """The experiment's grid and network in words, and what a reduced profile skips."""
    text = (f"K in {sizes.Ks}, A in {sizes.exponents}, n = ceil({sizes.n_scale:g} K^A) <= {sizes.n_max}, "
            f"n_test = {sizes.n_test},\nMLP: width {sizes.mlp_width_per_cluster}K, {sizes.mlp_steps} Adam steps, "
            f"budgets {sizes.mlp_budget_factors} x K")
    if reduced_scale:
        paper = get_profile("paper").theorem2
        text += (f"\nreduced scale: points with n > n_max are skipped;\nthe paper profile runs K up to {max(paper.Ks)} "
                 f"and n up to {thousands(paper.n_max)}")
    return text


def rho_frame(rows: list[dict]) -> pd.DataFrame:
    """:func:`rho_sweep` as a table: the test MSE per rho, indexed by rho over alpha / K."""
    return (pd.DataFrame(rows)[["rho_ratio", "rho", "test_mse"]]
            .rename(columns={"rho_ratio": "ρ / (α/K)", "rho": "ρ", "test_mse": "test MSE"}).set_index("ρ / (α/K)"))


def plot_learning_curves(result: SeparationResult, axes) -> list:
    """One panel per K: test MSE against n for every method (log-log), with Lemma 16's bound
    (dotted, where it falls inside the panel), Lemma 12's floor (1 - 1/K) Var g for rho = 0 (grey)
    and the trivial risk Var g (black, thin). Each panel has its own y-range, chosen so that every
    curve and both lines show. Returns the legend handles (for one legend shared by the panels)."""
    Ks = sorted({r["K"] for r in result.rows})
    axes = np.atleast_1d(axes).ravel()
    if len(axes) < len(Ks):
        raise ValueError(f"need one axis per K ({len(Ks)}), got {len(axes)}")
    methods = list(dict.fromkeys(r["method"] for r in result.rows))
    styles = {"mlp_B3K": ("C3", "o-"), "mlp_B6K": ("C1", "o-"), "laplace": ("C0", "s-"),
              "rfm_true_agop": ("C2", "^-"), "rfm_empirical": ("C4", "v-")}
    trivial = clipped_ramp_moments()["variance"]
    handles = []
    for ax, K in zip(axes, Ks):
        values = []
        for i, m in enumerate(methods):
            pts = sorted((r["n"], r["test_mse"]) for r in result.rows if r["K"] == K and r["method"] == m)
            color, style = styles.get(m, (f"C{5 + i}", "o-"))
            (line,) = ax.loglog([p[0] for p in pts], [p[1] for p in pts], style, color=color, ms=3, label=m)
            values += [p[1] for p in pts]
            if ax is axes[0]:
                handles.append(line)
        floor = agop_bayes_lower_bound(K)
        lo = min([v for v in values if v > 0] + [floor]) / 1.6
        hi = max(values + [trivial]) * 1.6
        ax.set_ylim(lo, hi)
        ns = np.array(sorted({r["n"] for r in result.rows if r["K"] == K}), dtype=float)
        lb = np.asarray(kernel_lower_bound(ns, K))
        shown = lb >= lo  # the bound far below every error would squash the curves
        (bound,) = ax.loglog(ns[shown], lb[shown], "k:", lw=1, label="Lemma 16 lower bound")
        rho0 = ax.axhline(floor, color="grey", lw=1, label=r"$(1-1/K)\,$Var $g$ (Lemma 12, $\rho = 0$)")
        triv = ax.axhline(trivial, color="k", lw=0.6, label="Var $g$ (trivial risk)")
        ax.xaxis.set_minor_formatter(NullFormatter())  # log-axis minor labels collide on short ranges
        ax.set(xlabel="$n$", title=f"K = {K}")
        if ax is axes[0]:
            handles += [bound, rho0, triv]
    for j, ax in enumerate(axes[: len(Ks)]):
        if j % 2 == 0:
            ax.set_ylabel("test MSE")
    for ax in axes[len(Ks):]:
        ax.set_visible(False)
    return handles


def learning_curves_figure(result: SeparationResult):
    """:func:`plot_learning_curves` on a grid of two panels per row, one legend below them."""
    import matplotlib.pyplot as plt

    Ks = sorted({r["K"] for r in result.rows})
    rows = max(1, (len(Ks) + 1) // 2)
    fig, axes = plt.subplots(rows, 2, figsize=(PAGE_WIDTH, 2.9 * rows + 0.9), layout="constrained", squeeze=False)
    handles = plot_learning_curves(result, axes)
    fig.legend(handles=handles, loc="outside lower center", ncols=2)
    return fig


def separation_findings(result: SeparationResult, rho_rows: list[dict] | None = None) -> dict[str, str]:
    """What page 08's experiment shows, one sentence per finding, each with the numbers behind it
    (computed from ``result`` and the ``rho_rows`` of :func:`rho_sweep`; for ``glue``): ``small``
    (the smallest budgets), ``mlp_best`` (where an MLP has the lowest error), ``example`` (the
    largest K at the largest budget), ``grow`` (kernel errors against K at A = 2), ``true_agop``
    (the ground-truth metric), ``rho`` (the rho sweep), ``rfm`` (the empirical AGOP), ``train``
    (whether the MLP at B = 3K fits its training set), ``direction`` (the theorem's direction at
    finite size) and ``direction_holds`` ("yes", "partly" or "no")."""
    df = result.frame()
    mlps = [c for c in df.columns if c.startswith("mlp")]
    kernels = [c for c in ("laplace", "rfm true agop", "rfm empirical") if c in df.columns]
    if not mlps or "laplace" not in df.columns:
        return {k: "not computed at this profile" for k in ("small", "mlp_best", "example", "grow", "true_agop", "rho", "rfm", "train",
                                                            "direction")} | {"direction_holds": "no"}
    best_mlp = df[mlps].min(axis=1)
    return (_budget_findings(df, best_mlp, mlps + kernels, kernels) | _kernel_findings(df, rho_rows)
            | _direction_findings(df, best_mlp) | {"train": _train_finding(result)})


def _budget_findings(df: pd.DataFrame, best_mlp: pd.Series, methods: list[str], kernels: list[str]) -> dict[str, str]:
    """Which method wins at which budget: ``small``, ``mlp_best``, ``example``, ``grow``."""
    A, K = df.index.get_level_values("A"), df.index.get_level_values("K")
    out = {}
    small = df[A <= 1.5]
    if len(small):
        winners = small[methods].idxmin(axis=1).value_counts()
        out["small"] = (f"at the smallest budgets (A ≤ 1.5) the lowest error is {winners.index[0].replace('_', ' ')}'s at "
                        f"{winners.iloc[0]} of {len(small)} points, and the best error is at least "
                        f"{small[methods].min(axis=1).min():.3g}")
    else:
        out["small"] = "no point has A ≤ 1.5 at this profile"
    big = df[(A >= 2) & (K >= 8)]
    if len(big):
        wins = int((best_mlp[big.index] < big[kernels].min(axis=1)).sum())
        top = df[(A >= 2.5) & (K >= 8)]
        ratio = (top["laplace"] / best_mlp[top.index]) if len(top) else None
        out["mlp_best"] = (f"from A = 2 on, at K ≥ 8, an MLP has the lowest error at {wins} of {len(big)} points"
                           + (f"; at A ≥ 2.5 Laplace's error is {span(ratio, '.1f')} times the best MLP's" if ratio is not None else ""))
    else:
        out["mlp_best"] = "no point has A ≥ 2 and K ≥ 8 at this profile"
    last = df[A == A.max()]
    kmax = last.index.get_level_values("K").max()
    at_kmax = last[last.index.get_level_values("K") == kmax]
    row, n_ex = at_kmax.iloc[-1], at_kmax.index[-1][2]
    out["example"] = (f"K = {kmax}, n = {n_ex}: best MLP {best_mlp[(kmax, A.max(), n_ex)]:.3g}, Laplace {row['laplace']:.3g}"
                      + (f", empirical RFM {row['rfm empirical']:.3g}" if "rfm empirical" in row else ""))
    at2 = df[A == 2.0]
    if len(at2):
        out["grow"] = ("at A = 2, Laplace's error is " + ", ".join(f"{v:.3g}" for v in at2["laplace"])
                       + f" for K = {', '.join(str(k) for k in at2.index.get_level_values('K'))}, and the best MLP's "
                       + ", ".join(f"{v:.3g}" for v in best_mlp[at2.index]))
    else:
        out["grow"] = "no point has A = 2 at this profile"
    return out


def _kernel_findings(df: pd.DataFrame, rho_rows: list[dict] | None) -> dict[str, str]:
    """The kernels handed the true metric (``true_agop``, ``rho``) and the empirical AGOP (``rfm``)."""
    out = {}
    if "rfm true agop" in df.columns:
        largest = df.groupby(level="K").tail(1)
        worse = int((largest["rfm true agop"] > largest["laplace"]).sum())
        floor_gap = largest["rfm true agop"] / largest["floor (L12)"]
        out["true_agop"] = (f"at the largest n of each K, Laplace with the ground-truth AGOP is worse than isotropic Laplace for "
                            f"{worse} of {len(largest)} K, at {span(floor_gap, '.2f')} times Lemma 12's floor (1 − 1/K) Var g")
    else:
        out["true_agop"] = "not computed at this profile"
    if rho_rows:
        best = min(rho_rows, key=lambda r: r["test_mse"])
        ratios = ", ".join(f"{r['rho_ratio']:g}" for r in rho_rows)
        out["rho"] = (f"over ρ / (α/K) in {ratios}, the lowest error is {best['test_mse']:.3g} (at {best['rho_ratio']:g}), "
                      f"against the trivial risk Var g = {float(clipped_ramp_moments()['variance']):.3g}")
    else:
        out["rho"] = "not computed"
    if "rfm empirical" in df.columns:
        better = df[df["rfm empirical"] < df["laplace"]]
        out["rfm"] = (f"RFM with the empirical AGOP beats isotropic Laplace at {len(better)} of {len(df)} points"
                      + (f", all with A ≥ {better.index.get_level_values('A').min():g}" if len(better) else ""))
    else:
        out["rfm"] = "not computed at this profile"
    return out


def _direction_findings(df: pd.DataFrame, best_mlp: pd.Series) -> dict[str, str]:
    """The theorem's direction at finite size: kernel errors grow with K at a fixed exponent, and
    the best MLP's error falls as n grows at each K."""
    grows = [bool(np.all(np.diff(g["laplace"].to_numpy()) > 0)) for _, g in df.groupby(level="A") if len(g) > 1]
    falls = [bool(np.all(np.diff(best_mlp[g.index].to_numpy()) < 0)) for _, g in df.groupby(level="K") if len(g) > 1]
    holds = "yes" if grows and falls and all(grows) and all(falls) else "partly" if any(grows) and any(falls) else "no"
    return {"direction": (f"Laplace's error grows with K at {sum(grows)} of {len(grows)} exponents, and the best MLP's error falls "
                          f"with n at {sum(falls)} of {len(falls)} K"), "direction_holds": holds,
            "direction_misses": f"{len(grows) - sum(grows) + len(falls) - sum(falls)}" if grows and falls else ""}


def _train_finding(result: SeparationResult) -> str:
    """Whether the MLP at the theorem's budget B = 3K fits its training set at the largest (K, n)."""
    train = [r for r in result.rows if r["method"] == "mlp_B3K"]
    if not train:
        return "not computed at this profile"
    r = max(train, key=lambda r: (r["K"], r["n"]))
    return f"the MLP at B = 3K ends at training MSE {r['train_mse_clipped']:.2g} (clipped) at K = {r['K']}, n = {r['n']}"


def separation_claims(findings: dict[str, str], page: str, profile: str, sizes) -> list:
    """Page 08's row of the status page: the direction Theorem 2 predicts, judged at finite size
    (:func:`separation_findings`) under the book's one rule: the part's statistic is the number of
    exponents and K at which the direction fails (it holds at none), and every point is one run,
    so the most it can be is "indicated (1 run)". The theorem's limit itself is not testable by
    simulation. ``sizes`` (:class:`~monosem.profiles.Theorem2Sizes`) name the scale."""
    from ..verdicts import Claim, Part

    misses = findings.get("direction_misses", "")
    part = Part("exponents and K where the direction fails", float(misses) if misses else None,
                (float(misses),) if misses else (), high=0.0, closed=True)
    return [Claim.judged(page, "Theorem 2's direction at finite size: kernel error grows with K, the MLP's falls with n", [part],
                         findings["direction"], profile=profile, width=f"{sizes.mlp_width_per_cluster} neurons per cluster",
                         batch=f"full batch up to {thousands(FrobeniusMLPConfig().max_batch)} examples",
                         n=f"n = ceil({sizes.n_scale:g} K^A) up to {thousands(sizes.n_max)}, K ≤ {max(sizes.Ks)} (each point one run)")]


def theorem2_rows(records: dict) -> list[dict[str, Any]]:
    """The experiment's cells (``{job: record}``) as export rows, one per (K, n, estimator): the
    estimator as the result table names it, its scalar metrics and settings, and the cell's key."""
    rows = []
    for job, rec in sorted(records.items(), key=lambda kv: (kv[0].K, kv[0].n, list(CELL_METHODS).index(kv[0].method), _row_name(kv[0]))):
        settings = {} if job.spec is None else {k: v for k, v in vars(job.spec).items() if isinstance(v, (int, float))}
        metrics = {k: v for k, v in rec["metrics"].items() if not isinstance(v, (list, dict)) and k != "method"}
        rows.append({"method": _row_name(job), "K": job.K, "n": job.n, "run": job.run, **metrics, **settings, "key": job.key()})
    return rows


register_rows("theorem2", theorem2_rows)
register_plot("theorem2", _plot)
