"""Section 1's claim, judged: a global RFM metric gains less over the isotropic Laplace kernel as
the number of clusters K grows.

The *gain* of a fit is the Laplace kernel's test MSE over RFM's, RFM scored by the paper's rule
for global RFM: the best test MSE of iterations 0-3 (``verdicts.scored(..., "best")``; iteration 0
is the Laplace kernel itself, so both come from one fit on one draw of the data). The last
iteration alone would let one diverging late iteration at small K decide the verdict. :func:`gain_claim` judges "the gain shrinks as K grows" the way
:mod:`monosem.experiments.verdicts` judges every comparison of the book: it compares the gain at
the largest K with the gain at the smallest K,

* on the means over runs: mean gain at the largest K / mean gain at the smallest K < 1;
* run by run: gain_r(largest K) / gain_r(smallest K) < 1 in the runs that have both K.

The status is the book's one rule (:func:`~monosem.experiments.verdicts.judge`): it
**reproduces** when the mean holds and the run-by-run comparison holds in at least
:data:`~monosem.experiments.verdicts.PAIRED_SHARE` of at least five runs; on fewer runs the most it
can be is **indicated**.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ... import plots
from ...progress import progress_bar
from ...data import mixed_link_model
from ...kernels import PerClusterOracle, RFMRegressor, effective_rank, normalized_spectrum, subspace_capture, trace_share
from ..recorded import load_recorded_cells
from ...tables import count, thousands
from ..results import GAUSSIAN_MEAN_OVER_MEDIAN, mean_over_median
from ..sweeps import sweep
from ..verdicts import Claim, Comparison
from ..families.kernels import RFM
from ...profiles import Profile
from ..estimate import DeviceModel, kernel_fit_seconds
from ..registry import register_cost

__all__ = ["CLAIM", "gain_claim", "Fit", "fit_global_rfm", "fits_frame", "over_runs", "mean_curves", "plot_gains",
           "plot_spectra", "metric_frame", "gain_frame", "live_claim", "live_numbers", "recorded_gains", "claims"]

#: the paper's claim (Section 1), in one line
CLAIM = "RFM's gain over the Laplace kernel shrinks as K grows"


def gain_claim(gains: Mapping[tuple[int, int], float], *, n: int = 0) -> Comparison:
    """Judge :data:`CLAIM` on ``gains`` = ``{(K, run): Laplace MSE / RFM MSE}``.

    The comparison's ``a`` is the gain at the largest K and ``b`` the gain at the smallest K;
    its status and evidence are those of :class:`~monosem.experiments.verdicts.Comparison`
    with threshold 1 (the ratio is that of the gains: below 1, the gain shrank).
    """
    Ks = sorted({K for K, _ in gains})
    nan = float("nan")
    if len(Ks) < 2:
        return Comparison(CLAIM, "gain, largest K", "gain, smallest K", Ks[-1] if Ks else 0, n, 1.0, nan, nan, ())
    lo, hi = Ks[0], Ks[-1]
    runs = sorted({r for K, r in gains if K == lo} & {r for K, r in gains if K == hi})
    mean_hi = float(np.mean([gains[hi, r] for r in runs])) if runs else nan
    mean_lo = float(np.mean([gains[lo, r] for r in runs])) if runs else nan
    return Comparison(CLAIM, f"gain at K = {hi}", f"gain at K = {lo}", hi, n, 1.0, mean_hi, mean_lo,
                      tuple((r, gains[hi, r] / gains[lo, r]) for r in runs))


# --- the page: global RFM against the Laplace kernel and the oracle, per K ---------------------


@dataclass(frozen=True)
class Fit:
    """One (K, run) of the page: the data model, the fitted global RFM, its test MSE at iterations
    0..T (iteration 0: the Laplace kernel), the median squared test error per iteration, and the
    per-cluster RFM oracle's test MSE."""

    K: int
    run: int
    model: Any
    rfm: RFMRegressor
    mse: tuple[float, ...]
    median_sq: tuple[float, ...]
    oracle: float


def fit_global_rfm(sizes, *, progress: bool = True) -> list[Fit]:
    """Global RFM (Section 2, bandwidth: the cluster median) and the per-cluster RFM oracle on run
    ``run``'s mixed-link model at every K of ``sizes`` (a profile's ``feature_learning``): one
    :class:`Fit` per (K, run), the test MSE recorded at every RFM iteration."""
    fits = []
    for K in progress_bar(sizes.Ks, desc="K", progress=progress):
        for run in range(sizes.runs):
            model = mixed_link_model(K, run)
            X, y, c = model.pool(sizes.n_train, run)
            Xt, yt, ct = model.test_set(sizes.n_test, run)
            rfm = RFMRegressor(iterations=sizes.iterations, bandwidth="cluster-median")
            rfm.fit(X, y, groups=c, X_test=Xt, y_test=yt)
            oracle = PerClusterOracle(RFMRegressor(iterations=sizes.iterations)).fit(X, y, c)
            sq = [(rfm.predict(Xt, iteration=t) - yt.numpy()) ** 2 for t in range(sizes.iterations + 1)]
            fits.append(Fit(K, run, model, rfm, tuple(rfm.test_mse_), tuple(float(np.median(s)) for s in sq),
                            float(((oracle.predict(Xt, ct) - yt.numpy()) ** 2).mean())))
    return fits


def fits_frame(fits: list[Fit]) -> pd.DataFrame:
    """One row per (K, run): Laplace, RFM's last and best iteration and the oracle's test MSE, RFM's
    last over Laplace, and the median squared test error of Laplace and of RFM's last iteration."""
    return pd.DataFrame([{
        "K": f.K, "run": f.run, "Laplace": f.mse[0], "RFM": f.mse[-1], "RFM best": min(f.mse), "oracle RFM": f.oracle,
        "RFM / Laplace": f.mse[-1] / f.mse[0], "median sq. err., Laplace": f.median_sq[0], "median sq. err., RFM": f.median_sq[-1],
    } for f in fits]).set_index(["K", "run"])


def over_runs(fits: list[Fit], Ks, key: Callable[[Fit], float], geometric: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``key`` of every fit, as (mean, standard deviation) over the runs at every K of ``Ks``; with
    ``geometric``, (geometric mean, geometric standard deviation), the centre and the ×/÷ factor of
    a band on a log axis."""
    per_K = [np.asarray([key(f) for f in fits if f.K == K], dtype=float) for K in Ks]
    if geometric:
        logs = [np.log(v) for v in per_K]
        return np.exp([np.mean(v) for v in logs]), np.exp([np.std(v) for v in logs])
    return np.array([np.mean(v) for v in per_K]), np.array([np.std(v) for v in per_K])


def mean_curves(fits: list[Fit], Ks, geometric: bool = False) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The page's curves over K: Laplace, RFM's last and best iteration and the oracle (mean and
    std over runs, or geometric mean and std: :func:`over_runs`)."""
    T = len(fits[0].mse) - 1
    return {"Laplace (iteration 0)": over_runs(fits, Ks, lambda f: f.mse[0], geometric),
            f"RFM (iteration {T})": over_runs(fits, Ks, lambda f: f.mse[-1], geometric),
            f"RFM, best of 0-{T}": over_runs(fits, Ks, lambda f: min(f.mse), geometric),
            "per-cluster RFM (oracle)": over_runs(fits, Ks, lambda f: f.oracle, geometric)}


def _band(ax, x, centre, factor, color) -> None:
    """A band from centre ÷ factor to centre × factor (a geometric std): symmetric on a log axis,
    where mean ± std over a few runs would reach zero or below."""
    ax.fill_between(x, centre / factor, centre * factor, color=color, alpha=0.2, lw=0)


def plot_gains(fits: list[Fit], Ks, n_train: int, noise_sd: float = 0.02):
    """Test MSE against K (left) and RFM's last iteration over Laplace (right), geometric means
    over runs banded ×/÷ one geometric std (both axes are logarithmic)."""
    runs = len({f.run for f in fits})
    ratio = over_runs(fits, Ks, lambda f: f.mse[-1] / f.mse[0], geometric=True)
    with plots.paper_style():
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(plots.PAGE_WIDTH, 3.6), layout="constrained")
        for name, (centre, factor) in mean_curves(fits, Ks, geometric=True).items():
            (line,) = ax1.plot(Ks, centre, marker="o", label=name)
            _band(ax1, Ks, centre, factor, line.get_color())
        ax1.axhline(noise_sd**2, color="grey", ls=":", lw=1, label="noise variance")
        ax1.set(xscale="log", yscale="log", xlabel="number of clusters $K$", ylabel="test MSE", title=f"{count(runs, 'run')}, n = {thousands(n_train)}")
        ax2.plot(Ks, ratio[0], marker="o", color="C1")
        _band(ax2, Ks, ratio[0], ratio[1], "C1")
        ax2.axhline(1.0, color="grey", lw=1)
        ax2.set(xscale="log", yscale="log", xlabel="number of clusters $K$", ylabel="RFM / Laplace test MSE",
                title="what the learned metric buys")
        fig.legend(*ax1.get_legend_handles_labels(), loc="outside lower center", ncols=3)
    return fig


def plot_spectra(fits: list[Fit]):
    """Run 0's learned metric and population AGOP spectra (first 20 eigenvalues over the largest),
    one panel per K, with a dotted line at the rank of [v_1 ... v_K]."""
    first = {f.K: f for f in fits if f.run == 0}
    T, rows = len(fits[0].mse) - 1, (len(first) + 1) // 2
    with plots.paper_style():
        fig, axes = plt.subplots(rows, 2, figsize=(plots.PAGE_WIDTH, 2.8 * rows + 0.8), layout="constrained", sharey=True,
                                 squeeze=False)
        for ax, (K, f) in zip(axes.ravel(), first.items()):
            ax.plot(np.arange(1, 21), normalized_spectrum(f.rfm.metric_), marker="o", ms=3, label=f"RFM $M_{T}$")
            ax.plot(np.arange(1, 21), normalized_spectrum(f.model.population_agop()), marker="x", ms=3, ls="--",
                    label="population AGOP")
            ax.axvline(min(K, 10) + 0.5, color="grey", lw=0.8, ls=":")
            ax.set(yscale="log", ylim=(1e-4, 1.5), xlabel="eigenvalue index", title=f"K = {K}")
        for ax in axes[:, 0]:
            ax.set_ylabel(r"$\lambda_i / \lambda_1$")
        for ax in axes.ravel()[len(first):]:
            ax.set_visible(False)
        fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=2)
        fig.suptitle("AGOP spectra (run 0); dotted line: rank $[v_1 \\cdots v_K]$")
    return fig


def metric_frame(fits: list[Fit]) -> pd.DataFrame:
    """Per (K, run), what RFM's learned metric M found: the rank of [v_1 ... v_K], M's effective
    rank, its share of trace on the predictive block, and the share of [v]'s span it captures."""
    return pd.DataFrame([{
        "K": f.K, "run": f.run, "rank [v]": np.linalg.matrix_rank(f.model.directions), "eff. rank M": effective_rank(f.rfm.metric_),
        "pred. share": trace_share(f.rfm.metric_, f.model.info["blocks"]["predictive"]),
        "span captured": subspace_capture(f.rfm.metric_, f.model.directions),
    } for f in fits]).set_index(["K", "run"])


def gain_frame(fits: list[Fit], Ks) -> pd.DataFrame:
    """Per K: the mean Laplace test MSE over the mean of RFM's last iteration."""
    curves = list(mean_curves(fits, Ks).values())
    gain = curves[0][0] / curves[1][0]
    return pd.DataFrame({"K": list(Ks), "Laplace MSE / RFM MSE (means over runs)": list(gain)}).set_index("K")


def live_claim(fits: list[Fit], n: int) -> Comparison:
    """:data:`CLAIM` judged on the page's fits, RFM scored by its best iteration."""
    return gain_claim({(f.K, f.run): f.mse[0] / min(f.mse) for f in fits}, n=n)


def live_numbers(fits: list[Fit], Ks, n_train: int) -> dict[str, Any]:
    """The numbers the page's prose quotes from its own fits: the gain (means, last iteration) at
    the smallest, a middle and the largest K, the training size, what M found at K = 2 (run 0's
    effective rank, the predictive share and the gain), how far from flat the population AGOP's
    predictive block is at the largest K (its largest over its smallest eigenvalue, first 10),
    the runs, the Laplace kernel's mean over median squared test error (its range over the fits),
    and (means over runs) M's effective rank and captured span at the smallest K, its
    routing share and captured span at the largest K, and RFM's best iteration over the oracle
    there."""
    gain = dict(zip(Ks, gain_frame(fits, Ks).iloc[:, 0]))
    first = {f.K: f for f in fits if f.run == 0}
    lo, hi = min(Ks), max(Ks)
    mid = max((K for K in Ks if K < hi), default=lo)
    out: dict[str, Any] = {}
    for name, K in (("lo", lo), ("mid", mid), ("hi", hi)):
        out[f"gain_K_{name}"], out[f"gain_{name}"] = K, f"{gain[K]:.2g}"
    flat = normalized_spectrum(first[hi].model.population_agop())[: min(hi, 10)]
    metric = metric_frame(fits).groupby(level="K").mean()
    at_hi = [f for f in fits if f.K == hi]
    routing_hi = float(np.mean([trace_share(f.rfm.metric_, f.model.info["blocks"]["routing"]) for f in at_hi]))
    over_oracle_hi = float(np.mean([min(f.mse) for f in at_hi]) / np.mean([f.oracle for f in at_hi]))
    k2 = ("(K = 2 is not computed at this profile)" if 2 not in first else
          f"the metric has effective rank {effective_rank(first[2].rfm.metric_):.1f} (run 0), "
          f"{100 * metric.loc[2, 'pred. share']:.0f} % of its trace on the predictive block, and RFM cuts the Laplace "
          f"kernel's test MSE {gain[2]:.2g}-fold")
    return out | {"n_train": thousands(n_train), "k2_text": k2,
                  "tail_laplace": mean_over_median((f.mse[0], f.median_sq[0]) for f in fits),
                  "tail_gaussian": f"{GAUSSIAN_MEAN_OVER_MEDIAN:.2g}",
                  "flat_factor": f"{1 / flat[-1]:.1f}", "runs": count(len({f.run for f in fits}), "run"),
                  # the metric's measures (means over runs) that the prose reads at each K
                  "rank_lo": f"{metric.loc[lo, 'eff. rank M']:.2g}", "span_lo": f"{metric.loc[lo, 'span captured']:.2f}",
                  "routing_hi": f"{100 * routing_hi:.0f} %", "span_hi": f"{metric.loc[hi, 'span captured']:.2f}",
                  "oracle_hi": f"{over_oracle_hi:.2g}"}


def recorded_gains(profile: str = "long") -> tuple[dict[int, Comparison], dict[str, str]]:
    """The same question in the recorded long run (global RFM's iteration 0 is the Laplace kernel):
    the verdict per training size, and the prose's numbers (the mean gain, RFM scored by the best
    of its iterations as on page 04, at K = 50 per training size, and those sizes)."""
    records = load_recorded_cells(sweep("fig2", profile, methods=[RFM]), profile)
    gains: dict[tuple[int, int], list[float]] = {}
    by_n: dict[int, dict[tuple[int, int], float]] = {}
    for job, rec in records.items():
        its = rec["metrics"]["test_mse_by_iteration"]
        # the best of iterations 0-3, as the verdicts and page 04's tables score global RFM
        gains.setdefault((job.K, job.n), []).append(its[0] / min(its))
        by_n.setdefault(job.n, {})[job.K, job.run] = its[0] / min(its)
    at50 = {n: sum(v) / len(v) for (K, n), v in gains.items() if K == 50}
    numbers = {"long_gain_50": " and ".join(f"{g:.2g}×" for _, g in sorted(at50.items())) or "not recorded",
               "long_ns": " and ".join(thousands(n) for n in sorted(at50)) or "-"}
    return {n: gain_claim(g, n=n) for n, g in sorted(by_n.items())}, numbers


def claims(live: Comparison, recorded: Mapping[int, Comparison], page: str, profile: str, T: int) -> list[Claim]:
    """The claim as the rows of a verdict box and of the status page: at ``profile`` from the
    page's own fits, then per training size of the recorded long run. Kernels only: the scale has
    no network width or batch."""
    def row(c: Comparison, where: str) -> Claim:
        return Claim.judged(page, c.claim, [c.part()],
                            f"gain (best of 0-{T}) at K = {c.K} over K = {c.b.split()[-1]}: {c.evidence}",
                            profile=where, width="no network", batch="no network", n=c.n)

    return [row(live, profile)] + [row(c, "long (recorded)") for c in recorded.values()]


def page_cost(P: Profile, device: DeviceModel) -> dict[str, float]:
    """Page 01's heavy work (:mod:`~..estimate`): global RFM and the RFM oracle per K and run."""
    f = P.feature_learning
    fits = sum(kernel_fit_seconds("rfm", f.n_train, device) + kernel_fit_seconds("rfm", f.n_train, device, K) for K in f.Ks)
    return {"global RFM (iterations 0-3) and the RFM oracle": fits * f.runs}


register_cost("01_feature_learning", page_cost)
