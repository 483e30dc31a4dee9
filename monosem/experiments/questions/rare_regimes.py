"""Page 09, question 2: **rare regimes.** The paper's clusters are equally likely. The sweep
``zipf`` (declared here) draws them from a Zipf law, pi_c proportional to
(c + 1)^-s, and records every method's test MSE per cluster on a cluster-balanced test set, and
how many specialized neurons (A_j >= 0.71) serve each cluster. A rare cluster is judged against
itself at s = 0 (same geometry and link, more data), so that the clusters' different difficulty
(the He2 link is the hard one) cancels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import torch
from matplotlib.ticker import NullFormatter

from ...data import mixed_link_model
from ...tables import percent, thousands
from ._tables import fmt, frame
from .overlap import PREMISE_SHARE
from ..cache import Job
from ..families.kernels import ORACLE_RFM, RFM
from ..families.networks import MLP_REGLU, MLP_RELU
from ..families.bayes import BAYES
from ...profiles import Profile
from ..estimate import DeviceModel, kernel_fit_seconds, mlp_update_seconds
from ..sweeps import Figure, register_figure
from ..specs import MIXED_LINK_D
import matplotlib.pyplot as plt
from ..registry import register_cost, register_plot

__all__ = ["RARE_CLUSTERS", "premise", "zipf_rows", "zipf_frame", "zipf_findings", "zipf_answer", "plot_zipf", "zipf_shares",
           "zipf_scale"]

#: the methods of the rare-regime table, and their labels
_ZIPF_COLUMNS = {MLP_RELU: "ReLU", MLP_REGLU: "ReGLU", RFM: "RFM", ORACLE_RFM: "oracle"}
#: the same, for the figure's legend and the table's columns
_ZIPF_LABELS = {MLP_RELU: "ReLU MLP", MLP_REGLU: "ReGLU MLP", RFM: "global RFM", ORACLE_RFM: "RFM oracle"}
#: how many of the rarest (and of the most frequent) clusters the verdict averages over
RARE_CLUSTERS = 3


def zipf_rows(records: dict[Job, dict]) -> list[dict[str, Any]]:
    """One row per Zipf exponent s (ascending): the cluster probabilities pi_c, the training
    pool's cluster counts, every method's per-cluster test MSE, its cluster-balanced mean and its
    population risk under the law (sum_c pi_c MSE_c), and the networks' active neurons per
    best-aligned cluster c_j (all of them, and the specialized ones, A_j >= 0.71)."""
    rows = []
    for s in sorted({j.data.zipf for j in records}):
        mine = {j.method: (j, rec["metrics"]) for j, rec in records.items() if j.data.zipf == s}
        job = next(iter(mine.values()))[0]
        model = mixed_link_model(job.K, run=job.run, zipf=s)
        pi = (model.weights if model.weights is not None else torch.full((job.K,), 1.0 / job.K, dtype=torch.float64))
        counts = torch.bincount(model.pool(job.n, run=job.run)[2], minlength=job.K)
        row: dict[str, Any] = {"s": s, "K": job.K, "n": job.n, "pi": pi.tolist(), "n_train": counts.tolist(),
                               "links": list(model.link_names)}
        for method in (*_ZIPF_COLUMNS, BAYES):
            m = mine.get(method, (None, {}))[1]
            by = m.get("test_mse_by_cluster")
            row[method] = by
            row[f"{method}_mean"] = m.get("test_mse")
            row[f"{method}_risk"] = float(np.dot(pi.numpy(), by)) if by is not None else None
        for act in ("relu", "reglu"):
            m = mine.get(f"mlp-{act}", (None, {}))[1]
            row[f"{act}_neurons"] = m.get("aligned_by_cluster")
            row[f"{act}_specialized"] = m.get("specialized_by_cluster")
        rows.append(row)
    return rows


def zipf_shares(K: int, s: float) -> tuple[float, float]:
    """The most frequent and the rarest cluster's probability under the Zipf law of exponent
    ``s`` over ``K`` clusters, pi_c proportional to (c + 1)^(-s)."""
    pi = mixed_link_model(K, zipf=s).weights
    pi = torch.full((K,), 1.0 / K, dtype=torch.float64) if pi is None else pi
    return float(pi.max()), float(pi.min())


def zipf_scale(records: dict[Job, dict], rows: list[dict[str, Any]]) -> str:
    """The scale of the rare-regime cells in words (n, the networks' width and batch) and how far
    the best MLP is from the RFM oracle at s = 0 (cluster-balanced test MSE), where the question
    starts: a network far from the oracle there is not yet the well-trained one the question is
    about."""
    nets = [j.spec for j in records if j.method in (MLP_RELU, MLP_REGLU)]
    base = next((r for r in rows if r["s"] == 0), None)
    if not nets or base is None:
        return "not computed yet"
    scale = f"n = {thousands(base['n'])}" + f", networks of width {nets[0].width} and batch {nets[0].batch}"
    mlps = [base[f"{m}_mean"] for m in (MLP_RELU, MLP_REGLU) if base.get(f"{m}_mean") is not None]
    if not mlps or base.get(f"{ORACLE_RFM}_mean") is None:
        return scale
    return f"{scale}: at s = 0 the best MLP's test MSE is {fmt(min(mlps) / base[f'{ORACLE_RFM}_mean'], '.2g')}× the RFM oracle's"


def zipf_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """:func:`zipf_rows` as a table indexed by (s, cluster): per exponent, one row per cluster c
    (most frequent first) with pi_c, its training points n_c, its link, every method's test MSE on
    it (cluster-balanced test set) and the networks' active neurons whose best-aligned direction
    is cluster c's (c_j = c; ReGLU: its gate); then a row ``mean`` with every method's
    cluster-balanced test MSE and a row ``risk under pi`` with its risk under the law
    (sum_c pi_c MSE_c)."""
    methods = {m: f"{label} test MSE" for m, label in _ZIPF_LABELS.items()}
    neurons = {"relu": "ReLU active neurons (c_j = c)", "reglu": "ReGLU gate active neurons (c_j = c)"}
    out = []
    for r in rows:
        for c in range(r["K"]):
            row = {"s": r["s"], "cluster": c, "pi_c": r["pi"][c], "training points n_c": r["n_train"][c], "link": r["links"][c]}
            row |= {label: r[m][c] if r[m] else None for m, label in methods.items()}
            out.append(row | {label: r[f"{a}_neurons"][c] if r[f"{a}_neurons"] else None for a, label in neurons.items()})
        out.append({"s": r["s"], "cluster": "mean"} | {label: r[f"{m}_mean"] for m, label in methods.items()})
        out.append({"s": r["s"], "cluster": "risk under pi"} | {label: r[f"{m}_risk"] for m, label in methods.items()})
    return frame(out, ["s", "cluster", "pi_c", "training points n_c", "link", *methods.values(), *neurons.values()], ["s", "cluster"])


def _gmean(values) -> float | None:
    vals = [v for v in values if v is not None and np.isfinite(v) and v > 0]
    return float(np.exp(np.mean(np.log(vals)))) if vals else None


def _rare_comparison(r: dict[str, Any], base: dict[str, Any]):
    """At one exponent s > 0 against s = 0: the rarest clusters, every method's (rare, frequent)
    loss (geometric means of cluster MSE at s / at s = 0), the best MLP, whether it gains ground on
    the oracle on the rare clusters, its ratio to the oracle there, and per rare cluster the best
    MLP's loss over the oracle's; ``None`` until every method is computed.

    Whether the best MLP gains ground is read from the *median* of the per-cluster ratios (it
    loses no more than the oracle on most of the rare clusters), not from the ratio of the
    geometric means: one cluster on which the oracle fails would otherwise decide it."""
    order = np.argsort(r["pi"])  # ascending probability
    rare, freq = order[:RARE_CLUSTERS], order[::-1][:RARE_CLUSTERS]
    loss = {}
    for m in _ZIPF_COLUMNS:
        if r[m] is None or base[m] is None:
            continue
        loss[m] = (_gmean(r[m][c] / base[m][c] for c in rare), _gmean(r[m][c] / base[m][c] for c in freq))
    if ORACLE_RFM not in loss or not any(m in loss for m in (MLP_RELU, MLP_REGLU)):
        return None
    mlps = [m for m in (MLP_RELU, MLP_REGLU) if m in loss]
    best = min(mlps, key=lambda m: r[f"{m}_mean"] if r[f"{m}_mean"] is not None else np.inf)
    per = {int(c): (r[best][c] / base[best][c]) / (r[ORACLE_RFM][c] / base[ORACLE_RFM][c]) for c in rare}
    keeps = float(np.median(list(per.values()))) <= 1
    return rare, loss, best, keeps, _gmean(r[best][c] / r[ORACLE_RFM][c] for c in rare), per


def _per_cluster_text(r: dict[str, Any], keeps: bool, per: dict[int, float], loss: dict, best: str) -> str:
    """How the rare clusters vote, and where the ratio of the geometric means says otherwise, the
    one cluster that carries it (the oracle's MSE and loss there, the best MLP's loss)."""
    gains = sum(v <= 1 for v in per.values())
    text = (f"on the {len(per)} rarest clusters (it gains ground on {gains} of them; its loss is a median "
            f"{fmt(float(np.median(list(per.values()))), '.2f')}× the oracle's)")
    gmean_keeps = loss[best][0] <= loss[ORACLE_RFM][0]
    if gmean_keeps != keeps:
        c = min(per, key=per.get) if gmean_keeps else max(per, key=per.get)
        text += (f"; the geometric mean ({fmt(loss[best][0] / loss[ORACLE_RFM][0], '.2f')}×) says otherwise only "
                 f"because of cluster {c}, where the oracle's MSE is {fmt(r[ORACLE_RFM][c], '.2g')} and the best MLP's "
                 f"loss is {fmt(per[c], '.2g')}× the oracle's")
    return text


def premise(rows: list[dict[str, Any]]) -> tuple[bool | None, str]:
    """Whether the question's premise holds: specialized neurons (A >= 0.71) at s = 0, the larger
    of the two networks' shares of their active neurons at least
    :data:`~.overlap.PREMISE_SHARE` (page 09's one threshold); with the shares as words. ``None``
    when not measured."""
    base = next((r for r in rows if r["s"] == 0), None)
    shares = {}
    for act, name in (("relu", "ReLU"), ("reglu", "ReGLU gate")):
        neurons, spec = (base or {}).get(f"{act}_neurons"), (base or {}).get(f"{act}_specialized")
        if neurons and spec is not None and sum(neurons):
            shares[name] = sum(spec) / sum(neurons)
    if not shares:
        return None, "no specialized share measured at s = 0"
    words = " and ".join(f"{100 * v:.2g} % ({k})" for k, v in shares.items())
    return max(shares.values()) >= PREMISE_SHARE, (f"{words} of the active neurons specialized (A ≥ 0.71) at s = 0; the "
                                                    f"question needs {100 * PREMISE_SHARE:.2g} %")


def zipf_answer(rows: list[dict[str, Any]]) -> str:
    """The question's answer in one line per exponent s > 0: whether the best MLP gains or loses
    ground on the oracle on the rarest clusters, read from the median over those clusters (how
    many vote each way, and the one cluster that carries the geometric mean where it disagrees).
    Where the premise is absent (:func:`premise`) it says so first: the comparison is then one of
    networks, not of specialization."""
    base = next((r for r in rows if r["s"] == 0), None)
    if base is None:
        return "no s = 0 cells: nothing to compare the rare clusters with"
    holds, measured = premise(rows)
    prefix = (f"not answered for specialization at this scale: the premise is absent ({measured}); as networks only, "
              if holds is False else "")
    out = []
    for r in rows:
        cmp = _rare_comparison(r, base) if r["s"] != 0 else None
        if cmp is not None:
            _, loss, best, keeps, _, per = cmp
            out.append(f"s = {r['s']:g}: the best MLP {'gains' if keeps else 'loses'} ground on the oracle "
                       + _per_cluster_text(r, keeps, per, loss, best))
    return prefix + "; ".join(out) if out else "no s > 0 cells yet"


def zipf_findings(rows: list[dict[str, Any]]) -> str:
    """The verdict, computed. For every s > 0 and every method: the geometric mean, over the
    :data:`RARE_CLUSTERS` rarest clusters, of the cluster's test MSE at s over its test MSE at
    s = 0 (how much the method loses on a cluster when that cluster becomes rare), and the same over
    the most frequent clusters. The best MLP *gains ground* on the oracle (which fits each cluster
    on its own points only) on the rare clusters if it loses no more on them than the oracle does,
    and *loses ground* otherwise, read on the median of the per-cluster ratios (one cluster
    cannot decide it); then the active and specialized neurons aligned with them."""
    base = next((r for r in rows if r["s"] == 0), None)
    if base is None:
        return "no s = 0 cells: nothing to compare the rare clusters with"
    lines = []
    for r in rows:
        if r["s"] == 0:
            continue
        cmp = _rare_comparison(r, base)
        if cmp is None:
            lines.append(f"s = {r['s']:g}: not every method computed yet")
            continue
        rare, loss, best, keeps, vs_oracle, per = cmp
        mass = sum(r["pi"][c] for c in rare)
        lines.append(f"s = {r['s']:g}: the {RARE_CLUSTERS} rarest clusters hold {percent(mass, 1)} of the data "
                     f"({sum(r['n_train'][c] for c in rare)} points)")
        lines.append("  their test MSE at s / at s = 0 (most frequent clusters in brackets):")
        lines.append("  " + ", ".join(f"{_ZIPF_COLUMNS[m]} {fmt(v[0], '.2f')} ({fmt(v[1], '.2f')})" for m, v in loss.items()))
        lines.append(f"  best MLP ({_ZIPF_COLUMNS[best]}) on them: " + ("gains ground" if keeps else "loses ground")
                     + " on the oracle (median over them)")
        lines.append("  its loss / the oracle's per cluster: " + ", ".join(f"c{c} {fmt(v, '.2f')}" for c, v in per.items()))
        lines.append(f"  median {fmt(float(np.median(list(per.values()))), '.2f')}; ratio of the geometric means "
                     f"{fmt(loss[best][0] / loss[ORACLE_RFM][0], '.2f')}")
        lines.append(f"  at s it is {fmt(vs_oracle, '.2f')}× the oracle on them (geometric mean)")
        for act in ("relu", "reglu"):
            neur, spec = r[f"{act}_neurons"], r[f"{act}_specialized"]
            if neur and sum(neur):
                n_rare = sum(neur[c] for c in rare)
                lines.append(f"  {act}: {n_rare} of {sum(neur)} active neurons aligned with them "
                             f"({percent(n_rare / sum(neur))}); specialized "
                             f"{sum(spec[c] for c in rare) if spec else '-'}/{sum(spec) if spec else '-'}")
    return "\n".join(lines) if lines else "no s > 0 cells yet"


def plot_zipf(rows: list[dict[str, Any]], axes) -> None:
    """One panel per exponent s > 0: every method's test MSE on each cluster at s over its test
    MSE on the same cluster at s = 0 (the loss when the cluster becomes rare, the cluster's own
    difficulty cancelled), against the cluster's training count (log-log)."""
    base = next((r for r in rows if r["s"] == 0), None)
    rare = [r for r in rows if r["s"] > 0]
    if base is None:
        raise ValueError("plot_zipf needs the s = 0 cells: the per-cluster losses are relative to them")
    for ax, r in zip(axes, rare):
        n_c = np.asarray(r["n_train"], dtype=float)
        order = np.argsort(n_c)
        for method, label in _ZIPF_LABELS.items():
            if r[method] is None or base[method] is None:
                continue
            ratio = np.asarray(r[method], dtype=float) / np.asarray(base[method], dtype=float)
            ax.plot(n_c[order], ratio[order], "-", marker="o", ms=3, label=label)
        ax.axhline(1.0, color="0.5", lw=0.8)
        ax.axvline(r["n"] / r["K"], color="0.5", lw=0.8, ls=":")  # the cluster's count at s = 0
        ax.set(xscale="log", yscale="log", xlabel="training points in the cluster",
               title=f"Zipf exponent s = {r['s']:g}")
        ax.xaxis.set_minor_formatter(NullFormatter())
    axes[0].set_ylabel("test MSE on the cluster / at s = 0")
    axes[0].legend()


# beyond the paper (page 09): cluster frequencies from a Zipf law, per-cluster test MSE (its
# exponent 0 too: those cells also record the per-cluster test MSE, which Figure 2's do not)
register_figure(Figure("zipf", "Rare regimes: cluster frequencies from a Zipf law (beyond the paper)",
                       (MLP_RELU, MLP_REGLU, RFM, ORACLE_RFM, BAYES), "zipf",
                       variants=lambda sizes: [{"zipf": float(e)} for e in sizes.exponents]))


def page_cost(P: Profile, device: DeviceModel) -> dict[str, float]:
    """The rare-regime sweep's share of page 09's heavy work (:mod:`~..estimate`)."""
    s, z = P.sample_efficiency, P.zipf
    zipf_cells = len(z.Ks) * len(z.ns) * len(z.exponents) * z.runs
    zipf = sum(s.max_steps * mlp_update_seconds(s.width, s.batch, MIXED_LINK_D, a, device, zipf_cells) for a in ("relu", "reglu"))
    zipf += sum(kernel_fit_seconds("rfm", n, device, c) for n in z.ns for K in z.Ks for c in (1, K)) * z.runs * len(z.exponents)
    return {"rare regimes": zipf}


register_cost("09_beyond", page_cost, question=2)


def _plot_figure(P: Profile, records: dict, source: str = "", cache=None):
    """``monosem plot zipf``: :func:`plot_zipf` of the cells ``{job: record}``, one panel per Zipf
    exponent above 0 (the s = 0 cells are the reference)."""
    if not records:
        raise ValueError(f"no results of zipf at profile {P.name!r} to draw: run `python -m monosem run zipf --profile {P.name}` first")
    rows = zipf_rows(records)
    n = sum(r["s"] > 0 for r in rows)
    fig, axes = plt.subplots(1, n, figsize=(3.4 * n + 1.5, 3.4), layout="constrained", squeeze=False)
    plot_zipf(rows, list(axes[0]))
    return fig


register_plot("zipf", _plot_figure)
