"""The Section 3.3 page's computations: the paper's finding on MLP-gated local predictors judged on
a grid of cells (the live profile and the recorded ``long`` run use the same definition).

Finding: the MLP-gated local RFM beats global RFM at every K, and approaches the per-cluster
oracle (read as: within :data:`~.sample_efficiency.ORACLE_FACTOR` of it, finding 1b's reading);
each part is a row of its own, and so is the paper's K = 5, which not every profile's grid has;
judged over runs, with one scoring rule for every RFM variant (:mod:`.verdicts`). Beside it, the gate purity (adjusted Rand index of the learned gates against the true
clusters), which the paper does not report.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from ...data import mixed_link_model
from ...kernels import RFMRegressor
from ...progress import progress_bar
from ...profiles import Profile
from ..recorded import load_recorded_cells
from ...tables import span, thousands
from ..results import curve_table, with_spread
from ..sweeps import Figure, register_figure, sweep
from ..verdicts import RFM_RULES, complete_sizes, Claim, Comparison, combine, compare, per_run, scored_iteration
from .sample_efficiency import ORACLE_FACTOR
from ..families.gated import GATED_LAPLACE, GATED_RFM
from ..families.kernels import LAPLACE, ORACLE_LAPLACE, ORACLE_RFM, RFM
from ..families.networks import MLP_RELU
from ...data import LABEL_NOISE_VARIANCE
from ..estimate import DeviceModel, kernel_fit_seconds, mlp_update_seconds
from ..registry import register_cost
from ..specs import MIXED_LINK_D

__all__ = ["CLAIM", "ORACLE_CLAIM", "PAPER_KS", "EXTRA_K", "main_Ks", "oracle_comparisons", "gates_comparisons", "gates_status", "gates_table", "metric_updates", "claims", "FIGURE4_GLOBAL",
           "FIGURE4_LOCAL", "updates_help", "curve_frames", "recorded_long", "tables_by_size", "rules_frame", "long_numbers",
           "close_call_frame", "close_call_numbers", "links_frame", "links_numbers"]

#: the paper's Section 3.3 finding, in one line
CLAIM = "MLP-gated local RFM beats global RFM at every K"
#: its second part, "approaches the cluster-aware oracle", as the rows read it
ORACLE_CLAIM = f"MLP-gated local RFM approaches the cluster-aware oracle (within {ORACLE_FACTOR:g}× of the RFM oracle at every K)"
#: the paper's grid of K for Figure 4
PAPER_KS = (2, 5, 10, 50)
#: the K of the paper's grid that only the larger profiles have: judged in a row of its own
EXTRA_K = 5


def gates_comparisons(records: Mapping, Ks, n: int, rule: str = "best") -> tuple[Comparison, ...]:
    """Per K at training size ``n``: "the gated local RFM beats global RFM", judged on the means
    and run by run (:mod:`.verdicts`), both scored by ``rule``."""
    return tuple(compare(records, "gated RFM beats global RFM", GATED_RFM, RFM, K, n, rule=rule) for K in sorted(Ks))


def main_Ks(Ks: Iterable[int]) -> list[int]:
    """The K of ``Ks`` that the finding's main rows judge: all but :data:`EXTRA_K`, which has a row
    of its own."""
    return [K for K in Ks if K != EXTRA_K]


def gates_status(records: Mapping, Ks, n: int, rule: str = "best") -> str:
    """The finding "the gated local RFM beats global RFM at every K" (of :func:`main_Ks`)."""
    return combine(gates_comparisons(records, main_Ks(Ks), n, rule))


def oracle_comparisons(records: Mapping, Ks, n: int, rule: str = "best") -> tuple[Comparison, ...]:
    """Per K at training size ``n``: "the gated local RFM is within :data:`ORACLE_FACTOR` of the
    RFM oracle", on the means and run by run, both scored by ``rule``."""
    return tuple(compare(records, "gated RFM approaches the oracle", GATED_RFM, ORACLE_RFM, K, n, threshold=ORACLE_FACTOR,
                         rule=rule) for K in sorted(Ks))


def claims(records: Mapping, Ks, n: int, page: str, profile: str, width: int, batch: int, rule: str = "best") -> list[Claim]:
    """The finding as rows of a verdict box and of the status page, at the scale ``profile``,
    ``width`` and ``batch`` (the source networks') and ``n``: the gated local RFM beats global RFM
    at every K of ``Ks`` but :data:`EXTRA_K`; it approaches the oracle at those K; and both at
    :data:`EXTRA_K`, a row of its own ("not computed" where that K has no run) so that a profile
    without it still judges the rest."""
    Ks = main_Ks(Ks)
    def label(c: Comparison, both: bool) -> str:
        return f"K = {c.K}" + ((", vs the oracle" if c.b == ORACLE_RFM else ", vs global RFM") if both else "")

    extra = (f"Figure 4 at K = {EXTRA_K}: the gated local RFM beats global RFM and is within {ORACLE_FACTOR:g}× of the RFM oracle",
             gates_comparisons(records, [EXTRA_K], n, rule) + oracle_comparisons(records, [EXTRA_K], n, rule), True)
    out = []
    for claim, parts, both in ((CLAIM, gates_comparisons(records, Ks, n, rule), False),
                               (ORACLE_CLAIM, oracle_comparisons(records, Ks, n, rule), False), extra):
        evidence = "; ".join(f"{label(c, both)}: {c.evidence}" for c in parts)
        out.append(Claim.judged(page, claim, [c.part(label(c, both)) for c in parts], evidence, profile=profile, width=width,
                                batch=batch, n=n))
    return out


def _mean(records: Mapping, method: str, K: int, n: int, rule: str, metric: str = "test_mse") -> float:
    v = list(per_run(records, method, K, n, rule, metric).values())
    return float(np.mean(v)) if v else float("nan")


def gates_table(records: Mapping, Ks, n: int, rule: str = "best") -> pd.DataFrame:
    """Per K at training size ``n``: gated local RFM, global RFM and the RFM oracle (means over
    runs, every RFM variant scored by ``rule``), their ratios, the paired verdict and the gate
    purity (adjusted Rand index of the test points' gates against the true clusters)."""
    rows = []
    for c in gates_comparisons(records, Ks, n, rule):
        g, o = c.mean_a, _mean(records, ORACLE_RFM, c.K, n, rule)
        rows.append({"K": c.K, "runs": c.runs, "gated RFM": g, "global RFM": c.mean_b, "RFM oracle": o,
                     "gated / global": c.mean_ratio, "gated / oracle": g / o,
                     "gated / global per run": ", ".join(f"{x:.2f}" for _, x in c.ratios),
                     "gate ARI": _mean(records, GATED_RFM, c.K, n, rule, "gate_ari_test"), "verdict": c.status})
    return pd.DataFrame(rows).set_index("K")


def metric_updates(records: Mapping, K: int, n: int) -> pd.DataFrame:
    """Test MSE at RFM iterations 0-3 (iteration 0: the Laplace kernel before any metric update)
    of every RFM variant at (K, n), mean over runs: whether the metric updates help."""
    rows = {}
    for method in (RFM, ORACLE_RFM, GATED_RFM):
        its = [rec["metrics"]["test_mse_by_iteration"] for job, rec in records.items()
               if job.method == method and job.K == K and job.n == n and "test_mse_by_iteration" in rec["metrics"]]
        if its:
            mean = np.mean(np.asarray(its, dtype=float), axis=0)
            rows[method] = {f"iteration {t}": v for t, v in enumerate(mean)} | {"runs": len(its), "last / first": mean[-1] / mean[0]}
    return pd.DataFrame.from_dict(rows, orient="index")


def updates_help(records: Mapping, method: str, K: int) -> str:
    """In how many recorded runs of ``method`` at ``K`` the metric updates end below iteration 0
    (test MSE at the last iteration under the first), per training size: "a of b at n = ..."."""
    runs: dict[int, list[bool]] = {}
    for job, rec in sorted(records.items(), key=lambda kv: (kv[0].n, kv[0].run)):
        its = rec["metrics"].get("test_mse_by_iteration")
        if job.method == method and job.K == K and its:
            runs.setdefault(job.n, []).append(its[-1] < its[0])
    return "; ".join(f"{sum(v)} of {len(v)} at n = {thousands(n)}" for n, v in runs.items()) or "no run recorded"


# --- the page: Figure 4's tables and the recorded long run -------------------------------------

#: Figure 4's methods, in the page's two tables: the network and the global kernels, then the
#: gated local predictors and the oracles
FIGURE4_GLOBAL = (MLP_RELU, LAPLACE, RFM)
FIGURE4_LOCAL = (GATED_LAPLACE, GATED_RFM, ORACLE_LAPLACE, ORACLE_RFM)
#: the methods every K of a training size needs before the long run's finding is judged there
_NEEDED = (GATED_RFM, RFM, ORACLE_RFM)


def curve_frames(records: Mapping) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 4 as two tables of ``mean ± std`` test MSE over runs, every RFM variant scored by its
    best iteration: the ReLU network and the global kernels, then the gated predictors and oracles."""
    return (with_spread(curve_table(records, list(FIGURE4_GLOBAL))), with_spread(curve_table(records, list(FIGURE4_LOCAL))))


def recorded_long(profile: Profile) -> dict:
    """The recorded cells of Figure 4 at ``profile`` (``long``): ``{job: record}``."""
    return load_recorded_cells(sweep("fig4", profile), profile.name)


def tables_by_size(records: Mapping, Ks: Iterable[int], ns: Iterable[int]) -> dict[tuple[int, str], pd.DataFrame]:
    """:func:`gates_table` at every training size of ``ns`` where every K of :func:`main_Ks` has the
    gated RFM, global RFM and the RFM oracle (with :data:`EXTRA_K` where it has them too), under
    both RFM scoring rules: ``{(n, rule): table}``."""
    Ks = list(Ks)
    extra = [K for K in Ks if K == EXTRA_K]
    tables = {}
    for n in complete_sizes(records, _NEEDED, main_Ks(Ks), ns):
        at_n = sorted(main_Ks(Ks) + (extra if complete_sizes(records, _NEEDED, extra, [n]) else []))
        tables.update({(n, rule): gates_table(records, at_n, n, rule) for rule in RFM_RULES})
    return tables


def rules_frame(tables: Mapping[tuple[int, str], pd.DataFrame]) -> pd.DataFrame:
    """The gated over global RFM ratio (ratio of means) per K, one column per (n, rule)."""
    return pd.DataFrame({f"n = {n}, {rule}": t["gated / global"] for (n, rule), t in tables.items()})


def _spread(values: Iterable[float]) -> str:
    """The range of ``values`` as the prose quotes it ("0.0025–0.007"; one value alone; "none")."""
    return span(values, ".2g", empty="none")


def close_call_frame(records: Mapping, K: int, ns: Iterable[int], rule: str = "best") -> pd.DataFrame:
    """The close call run by run: per (n, run) at ``K``, the run's links (eq. 5, drawn with the
    run's seed), the test MSE of the gated local RFM, global RFM and global Laplace (every RFM
    variant scored by ``rule``) and the gated over global ratio."""
    rows = []
    for n in sorted(ns):
        gated, glob, lap = (per_run(records, m, K, n, rule) for m in (GATED_RFM, RFM, LAPLACE))
        rows += [{"n": n, "run": r, "links": ", ".join(mixed_link_model(K, r).link_names), "gated RFM": gated[r],
                  "global RFM": glob[r], "global Laplace": lap.get(r, np.nan), "gated / global": gated[r] / glob[r]}
                 for r in sorted(gated.keys() & glob.keys())]
    columns = ["n", "run", "links", "gated RFM", "global RFM", "global Laplace", "gated / global"]
    return pd.DataFrame(rows, columns=columns).set_index(["n", "run"])


def close_call_numbers(frame: pd.DataFrame) -> dict[str, str]:
    """The numbers the page quotes of :func:`close_call_frame`, per training size
    (``<n/1000>k``): in how many runs the gated RFM is ahead, the range of the per-run ratios, the
    run closest to 1, its links, a clause naming the links every other run has and it lacks (``cc_lacks``),
    and that run's global RFM, global Laplace and gated RFM against the range of the other runs."""
    out: dict[str, str] = {}
    for n, f in frame.groupby(level="n"):
        f, k = f.droplevel("n"), n // 1000
        closest = f["gated / global"].idxmax()
        others = f.drop(index=closest)
        out[f"cc_ahead_{k}k"] = f"{int((f['gated / global'] < 1).sum())} of {len(f)}"
        out[f"cc_span_{k}k"] = _spread(f["gated / global"])
        out[f"cc_run_{k}k"] = str(closest)
        out[f"cc_links_{k}k"] = f.loc[closest, "links"]
        lacked = set.intersection(*(set(v.split(", ")) for v in others["links"])) - set(f.loc[closest, "links"].split(", ")) \
            if len(others) else set()
        out[f"cc_lacks_{k}k"] = (f"it is the one run without {', '.join(sorted(lacked))}" if lacked
                                 else "every one of its links appears in another run too")
        for column, key in (("global RFM", "rfm"), ("global Laplace", "lap"), ("gated RFM", "gated")):
            out[f"cc_{key}_{k}k"] = f"{f.loc[closest, column]:.2g}"
            out[f"cc_{key}_others_{k}k"] = _spread(others[column])
    return out


def links_frame(K: int, n: int, n_test: int, runs: Iterable[int], rule: str = "best", progress: bool = True) -> pd.DataFrame:
    """Where global RFM's test error sits, cluster by cluster: per run and cluster at ``(K, n)``,
    the cluster's link (eq. 5, drawn with the run's seed) and the test MSE on that cluster's test
    points of global Laplace (RFM's iteration 0) and of global RFM (the iteration ``rule`` picks
    on the whole test set). Exact solves: ``n`` is meant to stay below EigenPro's threshold, so the
    table is cheap enough for a page."""
    rows = []
    for run in progress_bar(list(runs), progress=progress, desc="links"):
        model = mixed_link_model(K, run)
        X, y, _ = model.pool(n, run=run, device="cpu")
        Xt, yt, ct = model.test_set(n_test, run=run, device="cpu")
        est = RFMRegressor(iterations=3, bandwidth="median", device="cpu").fit(X, y)
        sq = [(np.asarray(est.predict(Xt, iteration=t), dtype=np.float64).reshape(-1) - yt.double().numpy()) ** 2 for t in range(4)]
        best = scored_iteration([float(e.mean()) for e in sq], rule)
        c = ct.numpy()
        rows += [{"run": run, "cluster": k, "link": model.link_names[k], "global Laplace": float(sq[0][c == k].mean()),
                  "global RFM": float(sq[best][c == k].mean())} for k in range(K)]
    return pd.DataFrame(rows, columns=["run", "cluster", "link", "global Laplace", "global RFM"]).set_index(["run", "cluster"])


def links_numbers(frame: pd.DataFrame, link: str = "he2") -> dict[str, str]:
    """The numbers the page quotes of :func:`links_frame`: in the runs with exactly one cluster on
    ``link``, the range of that cluster's global RFM test MSE over the other cluster's
    (``lk_ratio``); global RFM's test MSE on the clusters of the runs without ``link``
    (``lk_without``) and on the other-link clusters of the runs with it (``lk_beside``), and
    whether these say that ``link`` carries global RFM's error (``lk_verdict``)."""
    has = frame.groupby(level="run")["link"].apply(lambda v: int((v == link).sum()))
    one = [r for r, count in has.items() if count == 1]
    ratios = [frame.loc[r].set_index("link")["global RFM"].pipe(lambda v: v[link] / v.drop(link).iloc[0]) for r in one]
    without = frame.loc[[r for r, count in has.items() if count == 0]]
    beside = frame.loc[[r for r, count in has.items() if count > 0]]
    holds = bool(ratios) and min(ratios) > 1 and len(without) and len(beside) \
        and beside.loc[beside["link"] != link, "global RFM"].min() > without["global RFM"].max()
    verdict = (f"so at this size the {link} cluster carries most of global RFM's error, and raises it on the cluster beside it"
               if holds else f"so at this size the {link} link does not account for global RFM's spread over runs")
    return {"lk_verdict": verdict, "lk_ratio": _spread(ratios), "lk_one_runs": ", ".join(map(str, one)) or "none",
            "lk_without": _spread(without["global RFM"]), "lk_without_runs": ", ".join(map(str, sorted(set(without.index.get_level_values("run"))))) or "none",
            "lk_beside": _spread(beside.loc[beside["link"] != link, "global RFM"])}


def long_numbers(tables: Mapping[tuple[int, str], pd.DataFrame], big_Ks: tuple[int, ...] = (10, 50)) -> dict[str, Any]:
    """The numbers the page's prose quotes, per training size (``<n/1000>k``): at K = 2 the gated
    over global ratio under both rules, the runs and the gate ARI; at ``big_Ks`` the smallest and
    largest factor by which the gated RFM beats global RFM."""
    out: dict[str, Any] = {}
    for n in sorted({n for n, _ in tables}):
        k, best = n // 1000, tables[(n, "best")]
        for rule in RFM_RULES:
            out[f"k2_{rule}_{k}k"] = f"{tables[(n, rule)].loc[2, 'gated / global']:.2f}"
        out[f"k2_runs_{k}k"] = int(best.loc[2, "runs"])
        out[f"k2_ari_{k}k"] = f"{best.loc[2, 'gate ARI']:.3f}"
        out[f"big_K_lo_{k}k"] = f"{1 / best.loc[list(big_Ks), 'gated / global'].max():.0f}"
        out[f"big_K_hi_{k}k"] = f"{1 / best.loc[list(big_Ks), 'gated / global'].min():.0f}"
    return out


# the label-noise variance drawn in every panel: the floor a local predictor can reach
register_figure(Figure("fig4", "Figure 4: MLP-gated local predictors (Section 3.3)", FIGURE4_GLOBAL + FIGURE4_LOCAL, "gates",
                       floor=LABEL_NOISE_VARIANCE))


def page_cost(P: Profile, device: DeviceModel) -> dict[str, float]:
    """Page 05's heavy work (:mod:`~..estimate`): the gated local kernels, and the ReLU networks,
    global kernels and oracles that page 04 does not compute."""
    g, s = P.gates, P.sample_efficiency
    new = [(K, n) for K in g.Ks for n in g.ns if K not in s.Ks or n not in s.ns]  # not computed by page 04
    nets = s.max_steps * mlp_update_seconds(s.width, s.batch, MIXED_LINK_D, "relu", device, max(1, len(new) * g.runs)) if new else 0.0
    gated = sum(kernel_fit_seconds(m, n, device, K) for m in ("rfm", "laplace") for K in g.Ks for n in g.ns) * g.runs
    rest = sum(kernel_fit_seconds(m, n, device, c) for m in ("rfm", "laplace") for K, n in new for c in (1, K)) * g.runs
    return {"ReLU networks not shared with page 04": nets, "gated local kernels": gated, "global kernels and oracles not shared": rest}


register_cost("05_learned_gates", page_cost)
