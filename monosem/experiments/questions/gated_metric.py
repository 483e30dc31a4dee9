"""Section 3.3: why the MLP-gated local RFM's metric updates can make it worse.

At K = 2 the recorded gated local RFM of some runs is best at iteration 0 (its local Laplace
kernels in the gate features z_c = G_c^{1/2} x) and worse after every AGOP update, while the
per-cluster RFM oracle, started from the identity, improves with the updates. Two things differ between them:
the routing (learned gates against the true clusters) and the starting metric (the MLP's G_c
against the identity). This module separates them on one recorded source network.

It refits the gated local RFM of a (K, n, run) twice on the same gates: with the paper's learned
features (start from G_c) and with isotropic features (start from I, as the oracle does). For
every gate and iteration it records the x-space metric M (G_c^{1/2} M_z G_c^{1/2} for the learned
features) and two numbers:

* the share of M's trace on the gate's true predictive direction, v^T M v / tr M, where v is the
  direction of the true cluster most of the gate's training points come from (within a cluster
  the target is g(<x, v>), so the ideal metric puts all its weight there);
* its share of trace on the routing coordinates (those that tell the clusters apart);
* its effective rank (tr M)^2 / tr(M^2).

It also counts the misrouted test points (whose gate's training points come mostly from another
cluster) and splits the test MSE between them and the rest: a misrouted point is predicted by
another cluster's local model, so its squared error is of the order of the variance of y.

A metric update of a Laplace kernel predictor in metric M gives gradients in the range of M
(the kernel's gradient is M (x - x') / ||x - x'||_M times a scalar), so the AGOP is M B M for some
B: starting from a sharp G_c, one update sharpens it further. Whether that is what hurts is what
the numbers say.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd
import torch

from ...gating import MLPGatedRegressor
from ...kernels import trace_share
from ...tables import percent, plural, thousands
from ..cache import Job, ResultCache
from ..families.gated import source_job
from ..families.networks import load_mlp, train_mlps
from ..methods import dataset
from ...profiles import Profile
from ..recorded import load_recorded_cells
from ..registry import register_method
from ..sweeps import Figure, register_figure, sweep
from ..verdicts import scored
from ..families.gated import GATED_RFM
from ..families.kernels import ORACLE_RFM

__all__ = ["FEATURE_STARTS", "METHOD", "metric_updates_by_start", "diagnosis_job", "compute_diagnosis", "recorded_diagnosis",
           "diagnosis_tables", "shown_mse", "diagnosis_numbers"]

#: the two starting metrics compared: the paper's learned features (G_c) and the identity
FEATURE_STARTS = {"G_c (paper)": "learned", "identity": "isotropic"}


def _share_and_rank(M: np.ndarray, v: np.ndarray) -> tuple[float, float]:
    tr = float(np.trace(M))
    return float(v @ M @ v) / tr, tr**2 / float(np.sum(M * M))


def metric_updates_by_start(gated_job: Job, cache: ResultCache) -> tuple[pd.DataFrame, pd.DataFrame]:
    """For the ``gated-rfm`` cell ``gated_job`` (its ReLU source network is trained into ``cache``
    when missing there):
    the test MSE at RFM iterations 0-3 under each starting metric of :data:`FEATURE_STARTS`, and
    per gate and iteration the metric's share on the true direction and its effective rank."""
    gated, src = gated_job.spec, source_job(gated_job)
    try:
        mlp = load_mlp(src, cache)
    except FileNotFoundError:  # a recorded cell ships without its network: train it again
        train_mlps([src], cache)
        mlp = load_mlp(src, cache)
    model, (X, y, c), (Xte, yte, cte) = dataset(gated_job)
    V = model.directions.double().cpu().numpy()
    routing = model.info["blocks"]["routing"]
    mse_rows: list[dict[str, Any]] = []
    metric_rows: list[dict[str, Any]] = []
    for start, features in FEATURE_STARTS.items():
        est = MLPGatedRegressor(mlp, local="rfm", n_gates=gated_job.K, n_init=gated.n_init, max_iter=gated.max_iter,
                                local_params=gated.local.solver.kwargs(gated_job.run, gated_job.data.dtype) | {"agop_samples": gated.local.agop_samples},
                                random_state=gated_job.run, features=features).fit(X, y)
        gates = est.assign(Xte)
        yt = yte.double().cpu().numpy()
        # a test point is misrouted when its gate's training points come mostly from another cluster
        majority = np.array([np.bincount(c.cpu().numpy()[est.train_gates_ == g], minlength=gated_job.K).argmax()
                             if (est.train_gates_ == g).any() else -1 for g in range(gated_job.K)])
        wrong = majority[gates] != cte.cpu().numpy()
        row: dict[str, Any] = {"start": start, "misrouted test points": int(wrong.sum()), "test points": int(len(wrong))}
        for t in range(4):
            se = (est.predict(Xte, iteration=t, gates=gates) - yt) ** 2
            row[f"iteration {t}"] = float(se.mean())
            row[f"iteration {t}, rightly routed"] = float(se[~wrong].mean())
            row[f"iteration {t}, misrouted share"] = float(se[wrong].sum() / se.sum())
        mse_rows.append(row)
        for g, sub in enumerate(est.estimators_):
            if sub is None:
                continue
            members = c.cpu().numpy()[est.train_gates_ == g]
            v = V[np.bincount(members).argmax()]
            S = est.gate_sqrt_[g].double().cpu().numpy()
            for t, h in enumerate(sub.history_):
                M = S @ np.asarray(torch.as_tensor(h["metric"]).double().cpu()) @ S
                share, rank = _share_and_rank(M, v)
                on_routing = float(trace_share(M, routing))
                metric_rows.append({"start": start, "gate": g, "iteration": t, "share on v_c": share,
                                    "share on the routing block": on_routing, "effective rank": rank})
    return pd.DataFrame(mse_rows).set_index("start"), pd.DataFrame(metric_rows)


#: the cell's method: the diagnosis of one ``gated-rfm`` cell (same data, same spec)
METHOD = "gated-metric"


def diagnosis_job(gated_job: Job) -> Job:
    """The diagnosis cell of the ``gated-rfm`` cell ``gated_job``."""
    return Job(METHOD, gated_job.data, gated_job.spec, gated_job.profile)


def compute_diagnosis(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    """:func:`metric_updates_by_start` of the cell's ``gated-rfm`` cell, JSON-ready: the test MSEs by
    starting metric and the metric's shares and rank per gate and iteration."""
    if cache is None:
        raise ValueError("the diagnosis reads (or trains into) a cache: its ReLU source network is kept there")
    mse, metrics = metric_updates_by_start(Job(GATED_RFM, job.data, job.spec, job.profile), cache)
    return {"K": job.K, "n": job.n, "run": job.run, "test_mse": {start: row.to_dict() for start, row in mse.iterrows()},
            "metrics": metrics.to_dict("records")}


def _figure_jobs(P: Profile) -> list[Job]:
    """The diagnosis at K = 2 (where the metric updates can hurt) for every gated RFM cell of Figure 4."""
    return [diagnosis_job(j) for j in sweep("fig4", P, Ks=[2], methods=[GATED_RFM])] if 2 in P.gates.Ks else []


register_method(METHOD, compute=compute_diagnosis)
register_figure(Figure("gated-metric", "When and why the gated RFM's metric updates hurt at K = 2 (Section 3.3)", (METHOD,), "gates",
                       jobs=_figure_jobs))


def recorded_diagnosis(profile: Profile) -> dict[Job, dict[str, Any]]:
    """The recorded diagnosis cells of ``profile``: ``{job: record}``."""
    return load_recorded_cells(sweep("gated-metric", profile), profile.name)


def diagnosis_tables(records: Mapping[Job, dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The diagnosis cells (``{job: record}``) as two tables: test MSE by RFM iteration per (K, n,
    run, start), and per (K, n, run, start, iteration) the metric's mean share on v_c and effective
    rank over gates."""
    entries = sorted((rec["metrics"] for rec in records.values()), key=lambda e: (e["K"], e["n"], e["run"]))
    mse = pd.DataFrame([{"K": e["K"], "n": e["n"], "run": e["run"], "start": start} | vals
                        for e in entries for start, vals in e["test_mse"].items()])
    rows = [{"K": e["K"], "n": e["n"], "run": e["run"]} | m for e in entries for m in e["metrics"]]
    columns = ["share on v_c", "share on the routing block", "effective rank"]
    metric = (pd.DataFrame(rows).reindex(columns=["K", "n", "run", "start", "iteration", *columns])
              .groupby(["K", "n", "run", "start", "iteration"])[columns].mean() if rows else pd.DataFrame())
    return (mse.set_index(["K", "n", "run", "start"]) if len(mse) else mse), metric


#: the test-MSE columns the page shows of :func:`diagnosis_tables`
SHOWN_COLUMNS = ("iteration 0", "iteration 3", "misrouted test points")


def shown_mse(mse: pd.DataFrame) -> pd.DataFrame:
    """The page's view of the diagnosis's test MSEs: iterations 0 and 3 (with their misrouted and
    rightly routed parts) and the misrouted test points."""
    if not len(mse):
        return mse
    return mse[[c for c in mse.columns if c.startswith(SHOWN_COLUMNS[:2]) or c == SHOWN_COLUMNS[2]]]


def _per_run(values: pd.Series, fmt: str | Callable[[float], str]) -> str:
    return ", ".join(f"{fmt(v) if callable(fmt) else fmt.format(v)} (run {r})" for r, v in values.items()) or "not recorded"


def diagnosis_numbers(mse: pd.DataFrame, metric: pd.DataFrame, records: Mapping, K: int = 2, n: int = 20_000,
                      prefix: str = "dg") -> dict[str, str]:
    """The numbers the page's prose quotes at (K, n), every recorded run, keyed ``{prefix}_...``:
    the gated RFM's test MSE at iterations 0 and 3 from G_c (``_g*``) and from the identity
    (``_i*``), its misrouted test points and their share of the error, the error on the rightly
    routed points, the RFM oracle's test MSE in the same runs (best iteration, from ``records``),
    the ratio of the two starts' test MSE at iteration 3 (identity over G_c, ``_i_over_g3``) and
    the runs where they end more than 2x apart (``_i_apart``), and the metric's share of trace on
    v_c (iterations 0 and 3) and on the routing block (iteration 0)."""
    learned, iso = list(FEATURE_STARTS)
    out: dict[str, str] = {}
    at = mse.xs((K, n), level=("K", "n")) if len(mse) else None
    by_start = {s: at.xs(s, level="start") for s in (learned, iso)} if at is not None and len(at) else {}
    for key, col, start, fmt in (("g0", "iteration 0", learned, "{:.2g}"), ("g3", "iteration 3", learned, "{:.2g}"),
                                 ("i0", "iteration 0", iso, "{:.2g}"), ("i3", "iteration 3", iso, "{:.2g}"),
                                 ("mis", "misrouted test points", learned, "{:.0f}"),
                                 ("share0", "iteration 0, misrouted share", learned, percent),
                                 ("share3", "iteration 3, misrouted share", learned, percent),
                                 ("right0", "iteration 0, rightly routed", learned, "{:.2g}"),
                                 ("right3", "iteration 3, rightly routed", learned, "{:.2g}")):
        sel = by_start.get(start)
        out[key] = "not recorded" if sel is None or sel.empty else _per_run(sel[col], fmt)
    # how far the two starts end apart: identity over G_c at iteration 3, and the runs beyond 2x
    apart = (by_start[iso]["iteration 3"] / by_start[learned]["iteration 3"]).dropna() if by_start \
        else pd.Series(dtype=float)
    out["i_over_g3"] = _per_run(apart, "{:.2f}")
    far = [str(r) for r, v in apart.items() if v > 2 or v < 0.5]
    out["i_apart"] = (f"{plural('run', len(far))} {', '.join(far)}" if far else "no run") if len(apart) else "not recorded"
    runs = set(at.index.get_level_values("run")) if at is not None else set()
    oracle = {j.run: scored(r, "best") for j, r in records.items()
              if j.method == ORACLE_RFM and j.K == K and j.n == n and j.run in runs}
    out["oracle"] = _per_run(pd.Series(dict(sorted(oracle.items()))), "{:.2g}")
    shares = metric.xs((K, n, learned), level=("K", "n", "start")) if len(metric) else None
    for key, col, t in (("share_v0", "share on v_c", 0), ("share_v3", "share on v_c", 3),
                        ("routing0", "share on the routing block", 0)):
        out[key] = "not recorded" if shares is None else _per_run(
            pd.Series({r: v for (r, it), v in shares[col].items() if it == t and v == v}), "{:.2f}")
    return {f"{prefix}_{key}": value for key, value in out.items()}


def diagnosis_frame(mse: pd.DataFrame, metric: pd.DataFrame, records: Mapping, K: int = 2, n: int = 20_000) -> pd.DataFrame:
    """The numbers of :func:`diagnosis_numbers` at (K, n) as a table, one row per quantity and one
    column per recorded run: a reader compares runs down a column, which a sentence listing every
    run's number does not allow."""
    learned, iso = list(FEATURE_STARTS)
    at = mse.xs((K, n), level=("K", "n")) if len(mse) else None
    by_start = {s: at.xs(s, level="start") for s in (learned, iso)} if at is not None and len(at) else {}
    rows: dict[str, pd.Series] = {}
    for label, col, start in (("test MSE from G_c, iteration 0", "iteration 0", learned),
                              ("test MSE from G_c, iteration 3", "iteration 3", learned),
                              ("test MSE from the identity, iteration 0", "iteration 0", iso),
                              ("test MSE from the identity, iteration 3", "iteration 3", iso),
                              ("rightly routed points' test MSE, iteration 0", "iteration 0, rightly routed", learned),
                              ("rightly routed points' test MSE, iteration 3", "iteration 3, rightly routed", learned),
                              ("misrouted test points", "misrouted test points", learned),
                              ("their share of the squared error, iteration 0", "iteration 0, misrouted share", learned),
                              ("their share of the squared error, iteration 3", "iteration 3, misrouted share", learned)):
        sel = by_start.get(start)
        if sel is not None and not sel.empty:
            rows[label] = sel[col]
    if by_start:
        rows["identity over G_c, iteration 3"] = by_start[iso]["iteration 3"] / by_start[learned]["iteration 3"]
    runs = set(at.index.get_level_values("run")) if at is not None else set()
    oracle = {j.run: scored(r, "best") for j, r in records.items()
              if j.method == ORACLE_RFM and j.K == K and j.n == n and j.run in runs}
    if oracle:
        rows["RFM oracle's test MSE (best iteration)"] = pd.Series(oracle)
    shares = metric.xs((K, n, learned), level=("K", "n", "start")) if len(metric) else None
    if shares is not None:
        for label, col, t in (("G_c's share of trace on v_c, iteration 0", "share on v_c", 0),
                              ("its share on v_c after three updates", "share on v_c", 3),
                              ("G_c's share on the routing coordinates", "share on the routing block", 0)):
            rows[label] = pd.Series({r: v for (r, it), v in shares[col].items() if it == t})
    frame = pd.DataFrame(rows).T if rows else pd.DataFrame()
    frame = frame.reindex(columns=sorted(frame.columns))
    frame.columns = [f"run {r}" for r in frame.columns]
    return frame.rename_axis(index=f"K = {K}, n = {thousands(n)}")
