"""Page 09, beyond the paper: the questions its readers ask next, answered by experiment.

Question 1, **overlapping clusters.** The paper's clusters are well separated: the mixed-link
model's routing noise is sigma_K = (1 - rho_K) / (2 gamma) with gamma = 4 (eq. 3). Lowering gamma
widens every cluster until they overlap and the cluster of a point is no longer a function of it;
the Bayes risk then rises above the label-noise floor. The sweep ``overlap`` (declared in
:mod:`.sweeps`) runs the Figure 2 / Figure 4 methods at one K and n for several gamma; this module
turns its records into the page's table, verdict and figure.

Question 2, **rare regimes.** The paper's clusters are equally likely. The sweep ``zipf`` draws
them from a Zipf law, pi_c proportional to (c + 1)^-s, and records every method's test MSE per
cluster on a cluster-balanced test set, and how many specialized neurons (A_j >= 0.71) serve each
cluster. A rare cluster is judged against itself at s = 0 (same geometry and link, more data),
so that the clusters' different difficulty (the He2 link is the hard one) cancels.

Question 3, **an explicit mixture of experts at matched compute.** The sweep ``moe`` trains a
top-1 mixture of E = K ReLU experts (a linear router, Switch Transformer routing and
load-balancing loss: Fedus, Zoph & Shazeer 2022; Shazeer et al. 2017) beside dense ReLU and ReGLU
networks with its parameter count and, separately, with its forward FLOPs per example, on Figure
2's data and protocol; the router's partition is scored against the true clusters (ARI).

Question 5, **drift** (:func:`drift_runs`): on the Figure 1 model, a network trained on the
original predictive directions continues on directions rotated toward fresh coordinates; which
of its specialized neurons re-align and which are recruited, against a network trained from
scratch on the drifted task.

Question 4, **routing or features?** The MLP-gated predictor of Section 3.3 does two things with
the trained network: it *routes* every point to a gate (K-means on the contribution profiles)
and it *transforms* the gate's inputs by the learned metric G_c (eq. 13-14). The sweep ``swaps``
exchanges one at a time for what the oracle knows, with Laplace local models throughout: learned
gates without the metric (``gated-laplace-iso``), true clusters with the learned metric
(``oracle-laplace-gc``), beside the paper's pipeline (``gated-laplace``) and the Laplace oracle
(true clusters, no metric). The gain of each swap, per K, says which half carries the result.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from matplotlib.ticker import NullFormatter, NullLocator

from ..data import LABEL_NOISE_VARIANCE, mixed_link_model
from ..models import forward_flops, matched_dense_width, parameter_count
from ..profiles import Profile, get_profile
from .cache import Job, ResultCache
from .methods import specialization_metrics
from .sweeps import MIXED_LINK_D, MOE_MATCHES, PAPER_GAMMA, moe_dense_widths, moe_expert_width

__all__ = ["bayes_risks", "overlap_rows", "format_overlap", "overlap_findings", "plot_overlap",
           "swap_rows", "format_swaps", "swap_findings", "plot_swaps", "MOE_TIE_BAND",
           "zipf_rows", "format_zipf", "zipf_findings", "plot_zipf",
           "moe_rows", "format_moe", "moe_accounting", "moe_findings", "plot_moe",
           "DRIFT_ANGLES", "drift_runs", "format_drift", "drift_findings"]

#: the methods of the overlap table, in column order, and their labels
_COLUMNS = {"mlp-relu": "ReLU", "mlp-reglu": "ReGLU", "rfm": "RFM", "gated-rfm": "gated", "oracle-rfm": "oracle",
            "bayes": "Bayes"}
#: the same, for the figure's legend
_LABELS = {"mlp-relu": "ReLU MLP", "mlp-reglu": "ReGLU MLP", "rfm": "global RFM", "gated-rfm": "MLP-gated RFM",
           "oracle-rfm": "RFM oracle", "bayes": "Bayes"}


def _gamma(job: Job) -> float:
    return float(job.param_dict.get("gamma", PAPER_GAMMA))


def bayes_risks(profile: str | Profile) -> dict[float, tuple[float, float]]:
    """The Bayes risk of each gamma of the overlap grid, exactly as page 02 computes it: the
    Bayes predictor's mean squared error on ``setting.n_bayes`` test points (run 0), with its
    Monte-Carlo standard error."""
    P = get_profile(profile)
    o = P.overlap
    out = {}
    for g in o.gammas:
        m = mixed_link_model(o.Ks[0], gamma=g)
        x, y, _ = m.test_set(P.setting.n_bayes, dtype=torch.float64)
        sq = (m.bayes(x) - y) ** 2
        out[float(g)] = (float(sq.mean()), float(sq.std() / math.sqrt(sq.numel())))
    return out


def overlap_rows(records: dict[Job, dict], risks: dict[float, tuple[float, float]] | None = None,
                 cache: ResultCache | None = None) -> list[dict[str, Any]]:
    """One row per gamma (descending): sigma_K, each method's test MSE, the gate ARI of the
    MLP-gated RFM, the networks' specialized fractions (active neurons with A_j >= 0.71; ReGLU:
    its gate), and the Bayes risk. A network cell cached before it recorded its specialized
    fractions gets them from its saved network in ``cache``."""
    rows = []
    for g in sorted({_gamma(j) for j in records}, reverse=True):
        mine = {j.method: rec for j, rec in records.items() if _gamma(j) == g}
        K = next(j.K for j in records if _gamma(j) == g)
        model = mixed_link_model(K, gamma=g)
        row: dict[str, Any] = {"gamma": g, "K": K, "sigma_K": float(model.info["sigma_K"]), "rho_K": float(model.info["rho_K"])}
        for method in _COLUMNS:
            row[method] = mine[method]["metrics"]["test_mse"] if method in mine else None
        gated = mine.get("gated-rfm", {}).get("metrics", {})
        row["gate_ari"] = gated.get("gate_ari_test")
        for act in ("relu", "reglu"):
            m = mine.get(f"mlp-{act}", {}).get("metrics", {})
            if m and "frac_A071" not in m and cache is not None:
                job = next(j for j in records if j.method == f"mlp-{act}" and _gamma(j) == g)
                try:
                    m = m | specialization_metrics(job, cache)
                except FileNotFoundError:
                    pass
            row[f"{act}_frac_A071"] = m.get("frac_A071")
            row[f"{act}_n_active"] = m.get("n_active")
            row[f"{act}_train_mse"] = m.get("train_mse")
            row[f"{act}_stop"] = m.get("stop_reason")
        if risks is not None and g in risks:
            row["bayes_risk"], row["bayes_risk_se"] = risks[g]
        rows.append(row)
    return rows


def _fmt(v, spec: str = ".3g") -> str:
    return "-" if v is None or (isinstance(v, float) and not np.isfinite(v)) else format(v, spec)


def format_overlap(rows: list[dict[str, Any]]) -> str:
    """The overlap table as text (lines of at most 80 characters): test MSE per method, then the
    networks' training and the gates."""
    lines = ["test MSE. ReLU, ReGLU: the MLPs; RFM: global RFM; gated: MLP-gated local RFM;",
             "oracle: RFM oracle; Bayes: the Bayes predictor on the same test set; Bayes",
             "risk: on page 02's sample",
             f"{'gamma':>5}{'sigma_K':>8}" + "".join(f"{label:>9}" for label in _COLUMNS.values()) + f"{'Bayes risk':>11}"]
    for r in rows:
        lines.append(f"{r['gamma']:>5g}{r['sigma_K']:>8.3f}" + "".join(f"{_fmt(r[m]):>9}" for m in _COLUMNS)
                     + f"{_fmt(r.get('bayes_risk')):>11}")
    lines += ["", "the networks (training MSE of the kept checkpoint, why it stopped), the gates",
              f"{'gamma':>5}{'ReLU train':>19}{'ReGLU train':>19}{'gate ARI':>9}{'A>=.71':>13}{'active':>10}"]
    for r in rows:
        frac = lambda v: "-" if v is None else f"{100 * v:.0f}%"  # noqa: E731
        train = {a: f"{_fmt(r[f'{a}_train_mse'], '.2g')} ({r[f'{a}_stop'] or '-'})" for a in ("relu", "reglu")}
        lines.append(f"{r['gamma']:>5g}{train['relu']:>19}{train['reglu']:>19}{_fmt(r['gate_ari'], '.2f'):>9}"
                     f"{frac(r['relu_frac_A071']) + ' / ' + frac(r['reglu_frac_A071']):>13}"
                     f"{_fmt(r['relu_n_active'], 'd') + ' / ' + _fmt(r['reglu_n_active'], 'd'):>10}")
    lines.append("(A>=.71 and active: ReLU / ReGLU gate, share and count of active neurons)")
    return "\n".join(lines)


def _excess(value, bayes) -> str:
    return _fmt(value - bayes) if value is not None and bayes is not None else "-"


def overlap_findings(rows: list[dict[str, Any]]) -> str:
    """The verdict, computed: at each gamma, the best MLP and the MLP-gated RFM against global
    RFM, and the excess risk over the Bayes risk; where specialization stops helping (the
    largest gamma at which neither the best MLP nor the gated RFM beats global RFM)."""
    lines, stops = [], None
    for r in rows:
        mlp = min((r[m] for m in ("mlp-relu", "mlp-reglu") if r[m] is not None), default=None)
        rfm, gated, bayes = r["rfm"], r["gated-rfm"], r.get("bayes_risk", r["bayes"])
        if mlp is None or rfm is None:
            continue
        helps = mlp < rfm or (gated is not None and gated < rfm)
        lines.append(f"gamma {r['gamma']:g}: best MLP / global RFM {mlp / rfm:.2f}, gated / global RFM "
                     f"{_fmt(gated / rfm if gated is not None else None, '.2f')}"
                     + ("" if helps else "  (neither wins)"))
        lines.append(f"  excess over the Bayes risk: MLP {_excess(mlp, bayes)}, global RFM {_excess(rfm, bayes)}, "
                     f"oracle RFM {_excess(r['oracle-rfm'], bayes)}")
        if not helps and stops is None:
            stops = r["gamma"]
    if not lines:
        return "no gamma has both an MLP and a global RFM result yet"
    lines.append("specialization " + (f"stops helping at gamma = {stops:g} (and below, down the grid)" if stops is not None
                                      else "helps at every gamma of the grid (the best MLP or the gated RFM wins)"))
    for r in rows:
        train = [r[f"{a}_train_mse"] for a in ("relu", "reglu") if r.get(f"{a}_train_mse") is not None]
        if train and r.get("bayes_risk") is not None and max(train) < r["bayes_risk"] / 10:
            lines.append(f"gamma {r['gamma']:g}: the networks end at training MSE {max(train):.2g} or less,")
            lines.append(f"  {r['bayes_risk'] / max(train):.0f}x below the Bayes risk {r['bayes_risk']:.2g}: they fit the noise")
    floor = rows[-1].get("bayes_risk")
    if floor is not None:
        lines.append(f"Bayes risk at the smallest gamma: {floor:.3g}, {floor / LABEL_NOISE_VARIANCE:.0f}x the noise floor "
                     f"{LABEL_NOISE_VARIANCE:.0e}")
    return "\n".join(lines)


def plot_overlap(rows: list[dict[str, Any]], axes) -> None:
    """Left: test MSE against gamma (falling to the right: more overlap); right: gate ARI and the
    specialized fractions."""
    ax, ax2 = axes
    g = [r["gamma"] for r in rows]
    for method, label in _LABELS.items():
        if method == "bayes":
            continue
        ys = [r[method] if r[method] is not None else np.nan for r in rows]
        ax.plot(g, ys, marker="o", label=label)
    if all("bayes_risk" in r for r in rows):
        ax.plot(g, [r["bayes_risk"] for r in rows], "k--", label="Bayes risk")
    ax.set(xscale="log", yscale="log", xlabel=r"separation $\gamma$ (paper: 4)", ylabel="test MSE")
    ax.invert_xaxis()
    ax.legend()
    for key, label in (("gate_ari", "gate ARI"), ("relu_frac_A071", r"ReLU: $A_j \geq .71$"), ("reglu_frac_A071", r"ReGLU gate: $A_j \geq .71$")):
        ax2.plot(g, [r[key] if r[key] is not None else np.nan for r in rows], marker="o", label=label)
    ax2.set(xscale="log", xlabel=r"separation $\gamma$", ylim=(0, 1.05))
    ax2.invert_xaxis()
    ax2.legend()
    for a in axes:  # the grid's gammas as plain tick labels
        a.set_xticks(g, [f"{v:g}" for v in g])
        a.xaxis.set_minor_locator(NullLocator())


# --------------------------------------------------------------------- routing or features?
#: the 2 x 2 design of the swaps figure: (routing, local features) -> method (Laplace locals)
SWAP_GRID = {("learned", "isotropic"): "gated-laplace-iso", ("learned", "learned"): "gated-laplace",
             ("true", "isotropic"): "oracle-laplace", ("true", "learned"): "oracle-laplace-gc"}
#: the references beside it: the paper's local RFM behind learned gates, the RFM oracle, the MLP
_SWAP_REFS = {"gated-rfm": "gated RFM", "oracle-rfm": "RFM oracle", "mlp-relu": "ReLU MLP"}


def swap_rows(records: dict[Job, dict]) -> list[dict[str, Any]]:
    """One row per K (ascending): the test MSE of the four Laplace pipelines of
    :data:`SWAP_GRID` and of the references, and the learned gates' ARI against the clusters."""
    rows = []
    for K in sorted({j.K for j in records}):
        mine = {j.method: rec["metrics"] for j, rec in records.items() if j.K == K}
        row: dict[str, Any] = {"K": K, "n": next(j.n for j in records if j.K == K)}
        for method in (*SWAP_GRID.values(), *_SWAP_REFS):
            row[method] = mine[method]["test_mse"] if method in mine else None
        row["gate_ari"] = mine.get("gated-laplace", {}).get("gate_ari_test")
        rows.append(row)
    return rows


def _ratio(a, b) -> float | None:
    return a / b if a is not None and b is not None else None


def format_swaps(rows: list[dict[str, Any]]) -> str:
    """The 2 x 2 table per K (test MSE; rows: routing, columns: local features) and the
    references, as text of at most 80 characters a line."""
    lines = ["test MSE of local Laplace predictors: routing (rows) x local features (columns)"]
    for r in rows:
        lines += ["", f"K = {r['K']}, n = {r['n']}, learned gates' ARI {_fmt(r['gate_ari'], '.2f')}",
                  f"{'routing':>16}{'isotropic (x)':>16}{'learned G_c':>16}"]
        for routing, label in (("learned", "learned gates"), ("true", "true clusters")):
            lines.append(f"{label:>16}{_fmt(r[SWAP_GRID[(routing, 'isotropic')]]):>16}{_fmt(r[SWAP_GRID[(routing, 'learned')]]):>16}")
        lines.append("  references: " + ", ".join(f"{label} {_fmt(r[m])}" for m, label in _SWAP_REFS.items()))
    return "\n".join(lines)


def swap_findings(rows: list[dict[str, Any]]) -> str:
    """The verdict, computed per K: the factor by which each swap lowers the test MSE of the
    paper's pipeline's neighbours. *Features* gain: isotropic / learned metric, under learned
    gates (and under true clusters); *routing* gain: learned gates / true clusters, with the
    learned metric (and without). The larger gain, under the paper's learned gates and metric, names
    the half that carries the result at that K; the last line gives what is left to the RFM oracle."""
    lines = []
    for r in rows:
        g = {key: r[m] for key, m in SWAP_GRID.items()}
        feat = _ratio(g[("learned", "isotropic")], g[("learned", "learned")])
        feat_true = _ratio(g[("true", "isotropic")], g[("true", "learned")])
        route = _ratio(g[("learned", "learned")], g[("true", "learned")])
        route_iso = _ratio(g[("learned", "isotropic")], g[("true", "isotropic")])
        if feat is None or route is None:
            lines.append(f"K = {r['K']}: not every pipeline computed yet")
            continue
        which = "the features carry more" if feat > route else "the routing carries more"
        lines += [f"K = {r['K']}: the learned metric: MSE / {feat:.2f} (learned gates), "
                  f"/ {_fmt(feat_true, '.2f')} (true clusters)",
                  f"  true routing: MSE / {route:.2f} (with the metric), / {_fmt(route_iso, '.2f')} (without)",
                  f"  -> {which}",
                  f"  local RFM instead of Laplace behind the learned gates: MSE / "
                  f"{_fmt(_ratio(g[('learned', 'learned')], r['gated-rfm']), '.2f')}",
                  f"  paper's pipeline / Laplace oracle "
                  f"{_fmt(_ratio(g[('learned', 'learned')], g[('true', 'isotropic')]), '.2f')}; "
                  f"gated RFM / RFM oracle {_fmt(_ratio(r['gated-rfm'], r['oracle-rfm']), '.2f')}"]
    aris = [r["gate_ari"] for r in rows if r["gate_ari"] is not None]
    if aris:
        lines.append(f"learned gates' ARI against the true clusters: {min(aris):.2f} at worst over K")
    return "\n".join(lines) if lines else "no K has a result yet"


def plot_swaps(rows: list[dict[str, Any]], ax) -> None:
    """Test MSE against K of the four Laplace pipelines (solid: learned gates, dashed: true
    clusters; circles: isotropic, squares: learned metric) and the RFM references (grey)."""
    Ks = [r["K"] for r in rows]
    styles = {"learned": "-", "true": "--"}
    markers = {"isotropic": "o", "learned": "s"}
    names = {"learned": "learned gates", "true": "true clusters"}
    for (routing, feats), method in SWAP_GRID.items():
        ys = [r[method] if r[method] is not None else np.nan for r in rows]
        ax.plot(Ks, ys, styles[routing], marker=markers[feats],
                label=f"{names[routing]}, {'learned $G_c$' if feats == 'learned' else 'isotropic'}")
    for method, style in (("gated-rfm", ":"), ("oracle-rfm", "-.")):
        ax.plot(Ks, [r[method] if r[method] is not None else np.nan for r in rows], style, color="0.5",
                label=_SWAP_REFS[method])
    ax.set(xscale="log", yscale="log", xlabel="K (clusters)", ylabel="test MSE")
    ax.set_xticks(Ks, [str(k) for k in Ks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.legend()


# ------------------------------------------------------------------------------ rare regimes
#: the methods of the rare-regime table, and their labels
_ZIPF_COLUMNS = {"mlp-relu": "ReLU", "mlp-reglu": "ReGLU", "rfm": "RFM", "oracle-rfm": "oracle"}
#: how many of the rarest (and of the most frequent) clusters the verdict averages over
RARE_CLUSTERS = 3


def zipf_rows(records: dict[Job, dict]) -> list[dict[str, Any]]:
    """One row per Zipf exponent s (ascending): the cluster probabilities pi_c, the training
    pool's cluster counts, every method's per-cluster test MSE, its cluster-balanced mean and its
    population risk under the law (sum_c pi_c MSE_c), and the networks' active neurons per
    best-aligned cluster c_j (all of them, and the specialized ones, A_j >= 0.71)."""
    rows = []
    for s in sorted({float(j.param_dict["zipf"]) for j in records}):
        mine = {j.method: (j, rec["metrics"]) for j, rec in records.items() if float(j.param_dict["zipf"]) == s}
        job = next(iter(mine.values()))[0]
        model = mixed_link_model(job.K, run=job.run, zipf=s)
        pi = (model.weights if model.weights is not None else torch.full((job.K,), 1.0 / job.K, dtype=torch.float64))
        counts = torch.bincount(model.pool(job.n, run=job.run)[2], minlength=job.K)
        row: dict[str, Any] = {"s": s, "K": job.K, "n": job.n, "pi": pi.tolist(), "n_train": counts.tolist(),
                               "links": list(model.link_names)}
        for method in (*_ZIPF_COLUMNS, "bayes"):
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


def format_zipf(rows: list[dict[str, Any]]) -> str:
    """Per exponent: one line per cluster (most frequent first) with pi_c, the training count, the
    link, every method's test MSE on it and the specialized neurons serving it; then the
    cluster-balanced mean and the population risk under the law (lines of at most 80 characters)."""
    lines = []
    for r in rows:
        lines += [f"s = {r['s']:g} (K = {r['K']}, n = {r['n']}): test MSE per cluster, cluster-balanced test set",
                  f"{'c':>2}{'pi_c':>7}{'n_c':>6}{'link':>6}" + "".join(f"{v:>9}" for v in _ZIPF_COLUMNS.values())
                  + f"{'neurons':>11}"]
        for c in range(r["K"]):
            neur = "/".join(_fmt(r[f"{a}_neurons"][c] if r[f"{a}_neurons"] else None, "d") for a in ("relu", "reglu"))
            link = {"(t^2-1)/sqrt2": "He2"}.get(r["links"][c], r["links"][c])[:5]
            lines.append(f"{c:>2}{r['pi'][c]:>7.3f}{r['n_train'][c]:>6}{link:>6}"
                         + "".join(f"{_fmt(r[m][c] if r[m] else None):>9}" for m in _ZIPF_COLUMNS) + f"{neur:>11}")
        lines.append(f"{'mean':>21}" + "".join(f"{_fmt(r[f'{m}_mean']):>9}" for m in _ZIPF_COLUMNS))
        lines.append(f"{'risk under pi':>21}" + "".join(f"{_fmt(r[f'{m}_risk']):>9}" for m in _ZIPF_COLUMNS))
        lines.append("")
    lines.append("neurons: active neurons whose best-aligned direction is cluster c's (c_j = c),")
    lines.append("ReLU / ReGLU gate")
    return "\n".join(lines)


def _gmean(values) -> float | None:
    vals = [v for v in values if v is not None and np.isfinite(v) and v > 0]
    return float(np.exp(np.mean(np.log(vals)))) if vals else None


def zipf_findings(rows: list[dict[str, Any]]) -> str:
    """The verdict, computed. For every s > 0 and every method: the geometric mean, over the
    :data:`RARE_CLUSTERS` rarest clusters, of the cluster's test MSE at s over its test MSE at
    s = 0 (how much the method loses on a cluster when that cluster becomes rare), and the same over
    the most frequent clusters. The best MLP *gains ground* on the oracle (which fits each cluster
    on its own points only) on the rare clusters if it loses no more on them than the oracle does,
    and *loses ground* otherwise; then the active and specialized neurons aligned with them."""
    base = next((r for r in rows if r["s"] == 0), None)
    if base is None:
        return "no s = 0 cells: nothing to compare the rare clusters with"
    lines = []
    for r in rows:
        if r["s"] == 0:
            continue
        order = np.argsort(r["pi"])  # ascending probability
        rare, freq = order[:RARE_CLUSTERS], order[::-1][:RARE_CLUSTERS]
        loss = {}
        for m in _ZIPF_COLUMNS:
            if r[m] is None or base[m] is None:
                continue
            loss[m] = (_gmean(r[m][c] / base[m][c] for c in rare), _gmean(r[m][c] / base[m][c] for c in freq))
        if "oracle-rfm" not in loss or not any(m in loss for m in ("mlp-relu", "mlp-reglu")):
            lines.append(f"s = {r['s']:g}: not every method computed yet")
            continue
        mass = sum(r["pi"][c] for c in rare)
        lines.append(f"s = {r['s']:g}: the {RARE_CLUSTERS} rarest clusters hold {100 * mass:.1f}% of the data "
                     f"({sum(r['n_train'][c] for c in rare)} points)")
        lines.append("  their test MSE at s / at s = 0 (most frequent clusters in brackets):")
        lines.append("  " + ", ".join(f"{_ZIPF_COLUMNS[m]} {_fmt(v[0], '.2f')} ({_fmt(v[1], '.2f')})" for m, v in loss.items()))
        mlps = [m for m in ("mlp-relu", "mlp-reglu") if m in loss]
        best = min(mlps, key=lambda m: r[f"{m}_mean"] if r[f"{m}_mean"] is not None else np.inf)
        keeps = loss[best][0] <= loss["oracle-rfm"][0]
        vs_oracle = _gmean(r[best][c] / r["oracle-rfm"][c] for c in rare)
        lines.append(f"  best MLP ({_ZIPF_COLUMNS[best]}) on them: " + ("gains ground" if keeps else "loses ground")
                     + f" on the oracle ({_fmt(loss[best][0] / loss['oracle-rfm'][0], '.2f')}x its loss)")
        lines.append(f"  at s it is {_fmt(vs_oracle, '.2f')}x the oracle on them (geometric mean)")
        for act in ("relu", "reglu"):
            neur, spec = r[f"{act}_neurons"], r[f"{act}_specialized"]
            if neur and sum(neur):
                n_rare = sum(neur[c] for c in rare)
                lines.append(f"  {act}: {n_rare} of {sum(neur)} active neurons aligned with them "
                             f"({100 * n_rare / sum(neur):.0f}%); specialized "
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
        for method, label in (("mlp-relu", "ReLU MLP"), ("mlp-reglu", "ReGLU MLP"), ("rfm", "global RFM"),
                              ("oracle-rfm", "RFM oracle")):
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


# ------------------------------------------------------------------ explicit mixture of experts
# Question 3: a top-1 mixture of E = K experts (Switch Transformer routing and load-balancing
# loss, Fedus, Zoph & Shazeer 2022; sparsely gated experts, Shazeer et al. 2017) against dense
# ReLU and ReGLU networks of its parameter count ("=P") and of its forward FLOPs per example
# ("=F"), on Figure 2's data and protocol (the sweep ``moe``, declared in :mod:`.sweeps`).

#: the dense columns of the mixture-of-experts table: (activation, match) -> label
_MOE_DENSE = {("relu", "params"): "ReLU=P", ("reglu", "params"): "ReGLU=P",
              ("relu", "flops"): "ReLU=F", ("reglu", "flops"): "ReGLU=F"}
_MOE_ACT = {"relu": "ReLU", "reglu": "ReGLU"}


def _mean(values) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def moe_rows(records: dict[Job, dict]) -> list[dict[str, Any]]:
    """One row per (K, n) with a mixture cell (ascending), over the runs that have one: the
    mixture's test MSE (mean over runs), its training MSE and stop reasons, the router's ARI
    against the true clusters (mean and minimum over runs), how many experts receive test points
    (fewest over runs) and the largest expert's share; and, for each dense activation and match
    (``relu_params``, ``reglu_params``, ``relu_flops``, ``reglu_flops``), the dense network's
    width (recomputed from the mixture's settings with
    :func:`~monosem.models.matched_dense_width`: which comparison a dense cell serves is not in
    its key), its test MSE (mean over the runs that have it), its parameter count and FLOPs, beside
    the mixture's (``moe_params``, ``moe_flops``)."""
    dense = {(j.method, j.K, j.n, j.run, j.param_dict.get("width"), j.param_dict.get("batch")): rec["metrics"]
             for j, rec in records.items() if j.method.startswith("mlp-")}
    groups: dict[tuple[int, int], list[tuple[Job, dict]]] = {}
    for j, rec in records.items():
        if j.method.startswith("moe-"):
            groups.setdefault((j.K, j.n), []).append((j, rec["metrics"]))
    rows = []
    for (K, n), cells in sorted(groups.items()):
        p = cells[0][0].param_dict
        E, m, act = p["n_experts"], p["width"], p["activation"]
        ms = [mm for _, mm in cells]
        row: dict[str, Any] = {
            "K": K, "n": n, "E": E, "m": m, "activation": act, "runs": len(cells),
            "moe": _mean(mm["test_mse"] for mm in ms), "moe_train_mse": _mean(mm.get("train_mse") for mm in ms),
            "moe_stop": sorted({mm.get("stop_reason") or "-" for mm in ms}),
            "router_ari": _mean(mm.get("router_ari") for mm in ms),
            "router_ari_min": min((mm["router_ari"] for mm in ms if mm.get("router_ari") is not None), default=None),
            "experts_used": min((sum(v > 0 for v in mm["expert_load"]) for mm in ms if mm.get("expert_load")), default=None),
            "max_load": max((max(mm["expert_load"]) for mm in ms if mm.get("expert_load")), default=None),
            "moe_params": parameter_count("moe", MIXED_LINK_D, m, act, E),
            "moe_flops": forward_flops("moe", MIXED_LINK_D, m, act, E),
        }
        for dact, match in _MOE_DENSE:
            w = matched_dense_width(E, m, MIXED_LINK_D, act, match, dense_activation=dact)
            found = [dense.get((f"mlp-{dact}", K, n, j.run, w, p["batch"])) for j, _ in cells]
            key = f"{dact}_{match}"
            row[key] = _mean(f["test_mse"] for f in found if f is not None)
            row[f"{key}_width"] = w
            row[f"{key}_n_params"] = parameter_count("mlp", MIXED_LINK_D, w, dact)
            row[f"{key}_flops"] = forward_flops("mlp", MIXED_LINK_D, w, dact)
        rows.append(row)
    return rows


def format_moe(rows: list[dict[str, Any]]) -> str:
    """The mixture-of-experts table as text (lines of at most 80 characters): per K and n the
    test MSE of the mixture and of the dense ReLU / ReGLU networks at matched parameters (=P) and
    matched forward FLOPs (=F), the router's ARI and the experts in use; then each K's widths and
    the mixture's training."""
    lines = ["test MSE (mean over runs). MoE: top-1 mixture of E = K ReLU experts of width m;",
             "=P: dense net with the MoE's parameter count; =F: with its forward FLOPs per",
             "example; ARI: the router's partition against the true clusters (test set);",
             "used: experts that receive test points",
             f"{'K':>3}{'n':>8}{'m':>5}{'MoE':>9}" + "".join(f"{label:>9}" for label in _MOE_DENSE.values())
             + f"{'ARI':>6}{'used':>6}"]
    for r in rows:
        lines.append(f"{r['K']:>3}{r['n']:>8}{r['m']:>5}{_fmt(r['moe']):>9}"
                     + "".join(f"{_fmt(r[f'{a}_{m}']):>9}" for a, m in _MOE_DENSE)
                     + f"{_fmt(r['router_ari'], '.2f'):>6}{_fmt(r['experts_used'], 'd') + '/' + str(r['E']):>6}")
    lines += ["", "dense widths (ReLU / ReGLU) and the mixture's training"]
    for K in dict.fromkeys(r["K"] for r in rows):
        r = next(x for x in rows if x["K"] == K)
        lines.append(f"K = {K}: =P {r['relu_params_width']} / {r['reglu_params_width']}, "
                     f"=F {r['relu_flops_width']} / {r['reglu_flops_width']}; MoE: E = {r['E']}, m = {r['m']}")
        for x in (x for x in rows if x["K"] == K):
            lines.append(f"  n = {x['n']}: MoE training MSE {_fmt(x['moe_train_mse'], '.2g')} "
                         f"({', '.join(x['moe_stop'])}), largest expert load {_fmt(x['max_load'], '.0%')}")
    return "\n".join(lines)


def moe_accounting(profile: str | Profile) -> str:
    """The parameter and FLOP arithmetic of page 09's mixtures at ``profile``, for every K of its
    grid: the router's and the experts' parameters, the routed forward FLOPs (a product of a
    p-vector with a p x q matrix counted as 2pq, as ``torch.utils.flop_counter`` counts it;
    elementwise work not counted), and the dense ReLU / ReGLU widths matched to each (lines of at
    most 80 characters)."""
    P = get_profile(profile)
    sizes = P.moe
    if sizes is None:
        raise ValueError(f"profile {P.name!r} has no moe grid")
    d = MIXED_LINK_D
    ref = sizes.reference_width or P.sample_efficiency.width
    lines = [f"d = {d} inputs; E = K experts, each a ReLU network of width m; m: the grid's,",
             "else the one whose mixture's parameters are closest to the dense ReLU net of",
             f"width {ref} ({parameter_count('mlp', d, ref, 'relu')} parameters, Figure 2's network "
             f"at profile {P.name!r})"]
    for K in sizes.Ks:
        E, m = K, moe_expert_width(K, P)
        router, expert = E * (d + 1), m * (d + 1) + m + 1
        total = parameter_count("moe", d, m, "relu", E)
        f_router, f_expert = 2 * d * E, 2 * d * m + 2 * m
        flops = forward_flops("moe", d, m, "relu", E)
        assert router + E * expert == total and f_router + f_expert == flops  # the formulas below are the code's
        lines += ["", f"K = {K}: E = {E} experts of width m = {m}",
                  f"  parameters: router E(d+1) = {E}*{d + 1} = {router}; experts E(m(d+1)+m+1) =",
                  f"    {E}*({m}*{d + 1}+{m}+1) = {E * expert}; total {total}",
                  f"  FLOPs per example: router 2dE = 2*{d}*{E} = {f_router}; the routed expert",
                  f"    2dm+2m = 2*{d}*{m}+2*{m} = {f_expert}; total {flops}",
                  f"    (not counted: the other experts' first layers, 2dm(E-1) = {2 * d * m * (E - 1)},",
                  "    which the vectorized code evaluates but a true dispatch does not)"]
        widths = moe_dense_widths(K, P, m)
        for match, target in (("params", total), ("flops", flops)):
            lines.append(f"  matched {'parameters' if match == 'params' else 'FLOPs'} ({target}):")
            for act in ("relu", "reglu"):
                H = widths[(act, match)]
                n_par, n_fl = parameter_count("mlp", d, H, act), forward_flops("mlp", d, H, act)
                if act == "relu":
                    par = f"H(d+1)+H+1 = {H}*{d + 1}+{H}+1 = {n_par}"
                    fl = f"2dH+2H = {2 * d + 2}*{H} = {n_fl}"
                else:
                    par = f"2H(d+1)+H+1 = {H}*{2 * (d + 1)}+{H}+1 = {n_par}"
                    fl = f"4dH+2H = {4 * d + 2}*{H} = {n_fl}"
                mine, other = (par, fl) if match == "params" else (fl, par)
                off = (n_par if match == "params" else n_fl) / target - 1
                lines.append(f"    {_MOE_ACT[act]} H = {H}: {mine} ({off:+.1%})")
                lines.append(f"      its {'FLOPs' if match == 'params' else 'parameters'}: {other}")
    return "\n".join(lines)


#: ratios MoE / dense within this band of 1 are reported as ties, not wins or losses: the sweep
#: has one run per cell, so the seed-to-seed spread is not measured (our choice)
MOE_TIE_BAND = 0.05


def _moe_verdict(rows: list[dict[str, Any]], match: str) -> tuple[list[str], int, int, int]:
    """The lines of one accounting's verdict for the rows of one K, and (wins, losses, compared)."""
    lines, wins, losses, compared = [], 0, 0, 0
    for r in rows:
        dense = {act: r[f"{act}_{match}"] for act in ("relu", "reglu") if r[f"{act}_{match}"] is not None}
        if r["moe"] is None or not dense:
            lines.append(f"    n = {r['n']}: not every network computed yet")
            continue
        best = min(dense, key=dense.get)
        ratio = r["moe"] / dense[best]
        compared += 1
        if ratio < 1 - MOE_TIE_BAND:
            wins += 1
            how = f"wins, {1 / ratio:.2f}x lower MSE"
        elif ratio > 1 + MOE_TIE_BAND:
            losses += 1
            how = f"loses, {ratio:.2f}x higher MSE"
        else:
            how = f"a tie (within {100 * MOE_TIE_BAND:.0f}%)"
        lines.append(f"    n = {r['n']}: MoE / {_MOE_ACT[best]} (the better dense) = {ratio:.2f}: {how}")
    return lines, wins, losses, compared


def moe_findings(rows: list[dict[str, Any]]) -> str:
    """The verdict, computed per K: at matched parameters and at matched forward FLOPs, does the
    mixture's test MSE beat the better of the dense ReLU and ReGLU networks at each n, and by what
    factor (the ratio MoE / better dense: below 1 the mixture wins); then the router's cluster
    recovery (ARI) and the experts it uses; a last line counts the wins over the grid."""
    if not rows:
        return "no mixture-of-experts cell computed yet"
    lines, totals = [], {match: [0, 0, 0] for match in MOE_MATCHES}
    for K in dict.fromkeys(r["K"] for r in rows):
        mine = [r for r in rows if r["K"] == K]
        lines.append(f"K = {K} (E = {mine[0]['E']} experts of width {mine[0]['m']}):")
        for match in MOE_MATCHES:
            body, wins, losses, compared = _moe_verdict(mine, match)
            for k, v in enumerate((wins, losses, compared)):
                totals[match][k] += v
            label = "matched parameters" if match == "params" else "matched FLOPs"
            ties = compared - wins - losses
            summary = ("no n computed yet" if not compared else "the MoE wins at every n" if wins == compared
                       else "the MoE loses at every n" if losses == compared
                       else f"the MoE wins at {wins}, loses at {losses}" + (f", ties at {ties}" if ties else "") + f" of {compared} n")
            lines += [f"  {label}: {summary}", *body]
        aris = [r["router_ari"] for r in mine if r["router_ari"] is not None]
        used = [r["experts_used"] for r in mine if r["experts_used"] is not None]
        if aris:
            lines.append(f"  router ARI against the true clusters: {min(aris):.2f} to {max(aris):.2f} over n "
                         "(1: the clusters)")
        if used:
            span = f"{min(used)}" if min(used) == max(used) else f"{min(used)} to {max(used)}"
            lines.append(f"  experts receiving test points: {span} of {mine[0]['E']}")
    for match, (wins, losses, compared) in totals.items():
        label = "parameters" if match == "params" else "FLOPs"
        lines.append(f"over the grid, at matched {label}: the MoE wins {wins}, loses {losses} of {compared} (K, n) cells")
    lines.append(f"(a tie: MoE / dense within {100 * MOE_TIE_BAND:.0f}% of 1; one run per cell, no spread measured)")
    return "\n".join(lines)


def plot_moe(rows: list[dict[str, Any]], axes) -> None:
    """One panel per K (the axes, in the order of the rows' K): test MSE against n, log-log, of
    the mixture (black) and of the dense ReLU / ReGLU networks at matched parameters (solid) and
    at matched FLOPs (dashed); the label-noise variance dotted."""
    Ks = list(dict.fromkeys(r["K"] for r in rows))
    if len(axes) < len(Ks):
        raise ValueError(f"axes must hold one panel per K ({len(Ks)}), got {len(axes)}")
    colors = {"relu": "C0", "reglu": "C1"}
    for ax, K in zip(axes, Ks):
        mine = [r for r in rows if r["K"] == K]
        ns = [r["n"] for r in mine]
        ax.plot(ns, [r["moe"] if r["moe"] is not None else np.nan for r in mine], "k-", marker="o",
                label=f"MoE, E = K, m = {mine[0]['m']}")
        for act, match in _MOE_DENSE:
            key = f"{act}_{match}"
            ax.plot(ns, [r[key] if r[key] is not None else np.nan for r in mine], "-" if match == "params" else "--",
                    color=colors[act], marker="s" if match == "params" else "^", ms=4,
                    label=f"{_MOE_ACT[act]}, width {mine[0][f'{key}_width']} ({'params' if match == 'params' else 'FLOPs'})")
        ax.axhline(LABEL_NOISE_VARIANCE, color="0.6", ls=":", lw=1, label="label-noise variance")
        ax.set(xscale="log", yscale="log", xlabel="training examples n", title=f"K = {K}")
        ax.set_xticks(ns, [f"{v:g}" for v in ns])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.legend()
    axes[0].set_ylabel("test MSE")


# ------------------------------------------------------------------------------------ drift
#: the drift angles of page 09's fifth question, in degrees (v_c rotated toward a fresh coordinate)
DRIFT_ANGLES = (30.0, 60.0, 90.0)
#: the specialization threshold of Figure 1 (A_j >= 1/sqrt 2: half the squared norm on one v_c)
_A_SPECIALIZED = 0.71


def _phase_data(model, sizes, device):
    """Figure 1's training, validation and test sets (Appendix A.1 sizes and our sample seeds)
    drawn from ``model``: a drifted model gives the same inputs and clusters, new targets."""
    from .specialization import FIGURE1_SAMPLE_SEEDS
    from ..train import TrainData

    x, y, _ = model.sample(sizes.n_train, FIGURE1_SAMPLE_SEEDS["train"], device=device)
    xv, yv, _ = model.sample(sizes.n_val, FIGURE1_SAMPLE_SEEDS["val"], device=device)
    xt, yt, _ = model.sample(sizes.n_test, FIGURE1_SAMPLE_SEEDS["test"], device=device)
    return TrainData(x, y, xv, yv), (xt, yt)


def _aligned(net, directions) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The active neurons of ``net`` (indices), their A_j and maximizing c_j against ``directions``."""
    from ..specialization import active_set, alignment, importance

    act = active_set(importance(net))
    A, c = alignment(net.W.detach()[act.to(net.W.device)].double().cpu(), directions)
    return act.cpu(), A, c


def drift_runs(profile: str | Profile, angles=DRIFT_ANGLES, *, activation: str = "relu", device=None) -> list[dict[str, Any]]:
    """Page 09, question 5: do specialized neurons follow drifting predictive directions?

    On :func:`~monosem.data.figure1_model` (the model of Figure 1, whose neurons specialize
    strongly) a ``activation`` network of the profile's Figure 1 sizes is trained as Appendix A.1
    (the reading :data:`~monosem.experiments.specialization.FIGURE1_READING`, the A.1 rate, the
    validation-selected checkpoint, ``max_steps_relu`` updates for ReLU): phase 1 on the original
    directions; then, for every angle, phase 2 continues the *same* network (a fresh Adam state
    and schedule: a new run started from the phase-1 weights, our choice) on
    :func:`~monosem.data.drifted_model` data for as many updates; beside it a network trained on
    the drifted data from scratch with the same budget. Returns one dict per angle: the test MSE
    of the continued and the scratch network on the drifted task (and of the phase-1 network on
    both tasks), and the specialized neurons (A_j >= 0.71): after phase 1 against the old
    directions, after phase 2 against the new ones, and how many of the latter are the same
    neurons re-aligned (same cluster), recruited (not specialized after phase 1), or lost."""
    from ..data import drifted_model, figure1_model
    from ..device import get_device
    from ..models import MLP, MLPStack
    from ..train import LR_A1, a1_config, mse, train
    from .specialization import FIGURE1_READING

    P = get_profile(profile)
    s = P.specialization
    dev = get_device(device)
    old = figure1_model()
    steps = s.max_steps_relu if activation == "relu" else s.max_steps_other
    cfg = a1_config(activation, max_steps=steps, batch=s.batch, eval_every=s.eval_every, step_revision=P.step_revision)
    reading = FIGURE1_READING
    seed = s.seeds[0]

    def fit(start: MLP | None, data, run_seed: int) -> MLP:
        stack = (MLPStack.from_models([start]) if start is not None else
                 MLPStack(old.d, s.width, activation, [run_seed], hidden_scale=reading.hidden_scale, init=reading.init,
                          readout_lr_scale=reading.readout_lr_scale(s.width), device=dev))
        return train(stack, data, cfg, lrs=[LR_A1[activation]], progress=False).models()[0]

    data1, (xt1, yt1) = _phase_data(old, s, dev)
    first = fit(None, data1, seed)
    act1, A1, c1 = _aligned(first, old.directions)
    spec1 = {int(j): int(c) for j, a, c in zip(act1, A1, c1) if a >= _A_SPECIALIZED}
    out = []
    for angle in angles:
        new = drifted_model(old, angle)
        data2, (xt2, yt2) = _phase_data(new, s, dev)
        cont = fit(first, data2, seed)
        scratch = fit(None, data2, seed + 1)  # another initialization: not phase 1's starting point
        act2, A2, c2 = _aligned(cont, new.directions)
        spec2 = {int(j): int(c) for j, a, c in zip(act2, A2, c2) if a >= _A_SPECIALIZED}
        _, A_old, _ = _aligned(cont, old.directions)
        _, A_s, _ = _aligned(scratch, new.directions)
        realigned = [j for j, c in spec2.items() if spec1.get(j) == c]
        W1, W2 = first.W.detach().double().cpu(), cont.W.detach().double().cpu()
        moved = [float(torch.nn.functional.cosine_similarity(W1[j], W2[j], dim=0)) for j in realigned]
        out.append({
            "angle": float(angle), "overlap": math.cos(math.radians(angle)), "steps": steps, "width": s.width,
            "phase1_test_old": float(mse(first, xt1, yt1)), "phase1_test_new": float(mse(first, xt2, yt2)),
            "continued_test": float(mse(cont, xt2, yt2)), "scratch_test": float(mse(scratch, xt2, yt2)),
            "spec_phase1": len(spec1), "active_phase1": int(len(act1)),
            "spec_phase2": len(spec2), "active_phase2": int(len(act2)),
            "still_old": int((A_old >= _A_SPECIALIZED).sum()), "spec_scratch": int((A_s >= _A_SPECIALIZED).sum()),
            "realigned": len(realigned), "recruited": sum(1 for j in spec2 if j not in spec1),
            "lost": sum(1 for j in spec1 if j not in spec2), "realigned_cosine": float(np.mean(moved)) if moved else None,
        })
    return out


def format_drift(rows: list[dict[str, Any]]) -> str:
    """The drift table as text (lines of at most 80 characters)."""
    if not rows:
        return "no drift run"
    r0 = rows[0]
    lines = [f"width {r0['width']}, {r0['steps']} updates per phase",
             f"phase 1: {r0['spec_phase1']} of {r0['active_phase1']} active neurons specialized (A >= .71)",
             f"{'angle':>5}{'cos':>6}{'test: cont.':>12}{'scratch':>9}{'ph.1':>8}"
             f"{'spec.':>6}{'re-al.':>7}{'recr.':>6}{'lost':>5}{'old':>5}{'scr.':>5}"]
    for r in rows:
        lines.append(f"{r['angle']:>5g}{r['overlap']:>6.2f}{r['continued_test']:>12.3g}{r['scratch_test']:>9.3g}"
                     f"{r['phase1_test_new']:>8.3g}{r['spec_phase2']:>6}{r['realigned']:>7}{r['recruited']:>6}"
                     f"{r['lost']:>5}{r['still_old']:>5}{r['spec_scratch']:>5}")
    lines += ["test: MSE on the drifted task of the continued network, of one trained from",
              "scratch for as many updates, and of the phase-1 network; spec.: specialized",
              "neurons after phase 2 (new directions), of which re-al. were specialized on",
              "the same cluster after phase 1 and recr. were not; lost: phase-1 specialized",
              "neurons that no longer are; old: still specialized on the old directions;",
              "scr.: specialized neurons of the scratch network"]
    return "\n".join(lines)


def drift_findings(rows: list[dict[str, Any]]) -> str:
    """The verdict per angle, computed: re-aligned or recruited (whichever supplies more of the
    phase-2 specialized neurons), how far the re-aligned neurons moved (cosine between their
    phase-1 and phase-2 weights), and whether phase 1 helps the drifted task (continued against
    scratch test MSE)."""
    lines = []
    for r in rows:
        total = r["spec_phase2"]
        if total == 0:
            lines.append(f"{r['angle']:g} degrees: no neuron specialized on the new directions")
            continue
        which = "re-aligned" if r["realigned"] >= r["recruited"] else "recruited"
        ratio = r["continued_test"] / r["scratch_test"]
        lines.append(f"{r['angle']:g} degrees: of the {total} specialized neurons {100 * r['realigned'] / total:.0f}% "
                     f"re-aligned, {100 * r['recruited'] / total:.0f}% recruited")
        lines.append(f"  -> mostly {which}")
        if r["realigned_cosine"] is not None:
            lines.append(f"  re-aligned neurons: cosine {r['realigned_cosine']:.2f} with their phase-1 weights "
                         f"(directions: {r['overlap']:.2f})")
        lines.append(f"  {r['still_old']} active neurons are still specialized on the old directions")
        lines.append(f"  continued / scratch test MSE {ratio:.2f}: phase 1 " + ("helps" if ratio < 1 else "hurts")
                     + " the drifted task")
    return "\n".join(lines)
