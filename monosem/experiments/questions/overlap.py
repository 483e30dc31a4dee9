"""Page 09, question 1: **overlapping clusters.** The paper's clusters are well separated: the
mixed-link model's routing noise is sigma_K = (1 - rho_K) / (2 gamma) with gamma = 4 (eq. 3).
Lowering gamma widens every cluster until they overlap and the cluster of a point is no longer a
function of it; the Bayes risk then rises above the label-noise floor. The sweep ``overlap``
(declared here) runs the Figure 2 / Figure 4 methods at one K and n for several
gamma; this module turns its records into the page's table, verdict and figure.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import torch
from matplotlib.ticker import NullLocator

from ...data import LABEL_NOISE_VARIANCE, mixed_link_model
from ...profiles import Profile, get_profile
from ...specialization import PAPER_FIGURE1
from ._tables import fmt, frame
from ..cache import Job, ResultCache
from ..families.networks import specialization_metrics
from ..families.gated import GATED_RFM
from ..families.kernels import ORACLE_RFM, RFM
from ..families.networks import MLP_REGLU, MLP_RELU
from ..families.bayes import BAYES
from ..estimate import DeviceModel, kernel_fit_seconds, mlp_update_seconds
from ..sweeps import Figure, register_figure
from ..specs import MIXED_LINK_D, PAPER_GAMMA
import matplotlib.pyplot as plt
from ..registry import register_cost, register_plot

__all__ = ["PAPER_MIN_SHARE", "PREMISE_DIVISOR", "PREMISE_SHARE", "PAPER_GAMMA", "premise", "overlap_answer", "bayes_risks", "overlap_rows", "overlap_frame", "overlap_findings", "plot_overlap"]

#: the methods of the overlap table and figure, in column order, and their labels
_LABELS = {MLP_RELU: "ReLU MLP", MLP_REGLU: "ReGLU MLP", RFM: "global RFM", GATED_RFM: "MLP-gated RFM",
           ORACLE_RFM: "RFM oracle", BAYES: "Bayes"}


#: the smallest share of specialized active neurons (A >= 0.71) in the paper's Figure 1 table
PAPER_MIN_SHARE = min(row[1] for row in PAPER_FIGURE1.values()) / 100
#: the premise holds when a network's share of specialized active neurons at :data:`PAPER_GAMMA`
#: reaches the paper's smallest share divided by this: well below every network of the paper,
#: yet enough that there is specialization whose loss under overlap the sweep could measure
PREMISE_DIVISOR = 10
PREMISE_SHARE = PAPER_MIN_SHARE / PREMISE_DIVISOR


def premise(rows: list[dict[str, Any]]) -> tuple[bool | None, str]:
    """Whether the question's premise holds at this scale: specialized neurons at the paper's
    separation (:data:`PAPER_GAMMA`), the larger of the ReLU and ReGLU gate shares at least
    :data:`PREMISE_SHARE`; with the shares measured, as words. ``None`` when not measured."""
    at = next((r for r in rows if r["gamma"] == PAPER_GAMMA), None)
    shares = {name: at.get(f"{act}_frac_A071") for act, name in _NETS.items()} if at is not None else {}
    measured = {k: v for k, v in shares.items() if v is not None}
    if not measured:
        return None, f"no specialized share measured at gamma = {PAPER_GAMMA:g}"
    words = " and ".join(f"{100 * v:.2g} % ({k}{' gate' if k == 'ReGLU' else ''})" for k, v in measured.items())
    return max(measured.values()) >= PREMISE_SHARE, (f"{words} of the active neurons specialized (A ≥ 0.71) at gamma = "
                                                      f"{PAPER_GAMMA:g}; the question needs {100 * PREMISE_SHARE:.2g} %")


def _gamma(job: Job) -> float:
    return job.data.gamma


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
        for method in _LABELS:
            row[method] = mine[method]["metrics"]["test_mse"] if method in mine else None
        gated = mine.get(GATED_RFM, {}).get("metrics", {})
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


#: the networks of the overlap table, and their labels
_NETS = {"relu": "ReLU", "reglu": "ReGLU"}


def overlap_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """:func:`overlap_rows` as a table, one row per gamma: sigma_K; every method's test MSE (Bayes:
    the Bayes predictor on the same test set) and the Bayes risk (on page 02's sample); the
    networks' training MSE at the kept checkpoint and why their training stopped; the MLP-gated
    RFM's gate ARI; the share of each network's active neurons with A_j >= 0.71 (percent; ReGLU:
    its gate) and its count of active neurons."""
    columns = ["gamma", "sigma_K", *(f"{label} test MSE" for label in _LABELS.values()), "Bayes risk",
               *(f"{name} {what}" for name in _NETS.values() for what in ("train MSE", "stop")), "gate ARI",
               "ReLU A ≥ .71 (%)", "ReGLU gate A ≥ .71 (%)", *(f"{name} active neurons" for name in _NETS.values())]
    out = []
    for r in rows:
        row = {"gamma": r["gamma"], "sigma_K": r["sigma_K"], "Bayes risk": r.get("bayes_risk"), "gate ARI": r["gate_ari"]}
        row |= {f"{label} test MSE": r[m] for m, label in _LABELS.items()}
        for act, name in _NETS.items():
            frac = r[f"{act}_frac_A071"]
            row |= {f"{name} train MSE": r[f"{act}_train_mse"], f"{name} stop": r[f"{act}_stop"],
                    f"{name}{' gate' if act == 'reglu' else ''} A ≥ .71 (%)": None if frac is None else 100 * frac,
                    f"{name} active neurons": r[f"{act}_n_active"]}
        out.append(row)
    return frame(out, columns, "gamma")


def _excess(value, bayes) -> str:
    return fmt(value - bayes) if value is not None and bayes is not None else "-"


def _against_rfm(r: dict[str, Any]) -> tuple[float | None, float | None, float | None, bool | None]:
    """At one gamma: the best MLP, global RFM, the gated RFM, and whether specialization helps
    there (the best MLP or the gated RFM beats global RFM; ``None`` without both results)."""
    mlp = min((r[m] for m in (MLP_RELU, MLP_REGLU) if r[m] is not None), default=None)
    rfm, gated = r[RFM], r[GATED_RFM]
    if mlp is None or rfm is None:
        return mlp, rfm, gated, None
    return mlp, rfm, gated, mlp < rfm or (gated is not None and gated < rfm)


def overlap_answer(rows: list[dict[str, Any]]) -> str:
    """The question's answer in one line: the largest gamma at which specialization stops
    helping (neither the best MLP nor the gated RFM beats global RFM), with the best MLP's ratio
    to global RFM at the paper's and at the smallest gamma. Where the premise is absent (no
    specialized neurons at the paper's gamma, :func:`premise`) it says so instead: the sweep
    then measures the local predictors, not specialization."""
    judged = [(r["gamma"], _against_rfm(r)) for r in rows if _against_rfm(r)[3] is not None]
    if not judged:
        return "no gamma has both an MLP and a global RFM result yet"
    stops = next((g for g, (_, _, _, helps) in judged if not helps), None)
    ends = " → ".join(f"{mlp / rfm:.2f} at gamma {g:g}" for g, (mlp, rfm, _, _) in (judged[0], judged[-1]))
    holds, measured = premise(rows)
    if holds is False:
        return (f"not answered at this scale: the premise is absent ({measured}), so there is no specialization to lose "
                f"as the clusters overlap; best MLP / global RFM {ends}")
    return ("local predictors " if holds is None else "specialization ") + (
        f"stop{'s' if holds else ''} helping at gamma = {stops:g} (and below, down the grid)" if stops is not None
        else f"help{'s' if holds else ''} at every gamma of the grid (the best MLP or the gated RFM wins)") + \
        f"; best MLP / global RFM {ends}" + (f" ({measured})" if holds is None else "")


def overlap_findings(rows: list[dict[str, Any]]) -> str:
    """The verdict, computed: at each gamma, the best MLP and the MLP-gated RFM against global
    RFM, and the excess risk over the Bayes risk; where specialization stops helping (the
    largest gamma at which neither the best MLP nor the gated RFM beats global RFM)."""
    lines, stops = [], None
    for r in rows:
        mlp, rfm, gated, helps = _against_rfm(r)
        bayes = r.get("bayes_risk", r[BAYES])
        if helps is None:
            continue
        lines.append(f"gamma {r['gamma']:g}: best MLP / global RFM {mlp / rfm:.2f}, gated / global RFM "
                     f"{fmt(gated / rfm if gated is not None else None, '.2f')}"
                     + ("" if helps else "  (neither wins)"))
        lines.append(f"  excess over the Bayes risk: MLP {_excess(mlp, bayes)}, global RFM {_excess(rfm, bayes)}, "
                     f"oracle RFM {_excess(r[ORACLE_RFM], bayes)}")
        if not helps and stops is None:
            stops = r["gamma"]
    if not lines:
        return "no gamma has both an MLP and a global RFM result yet"
    lines.append(overlap_answer(rows))
    for r in rows:
        train = [r[f"{a}_train_mse"] for a in ("relu", "reglu") if r.get(f"{a}_train_mse") is not None]
        if train and r.get("bayes_risk") is not None and max(train) < r["bayes_risk"] / 10:
            lines.append(f"gamma {r['gamma']:g}: the networks end at training MSE {max(train):.2g} or less,")
            lines.append(f"  {r['bayes_risk'] / max(train):.0f}× below the Bayes risk {r['bayes_risk']:.2g}: they fit the noise")
    floor = rows[-1].get("bayes_risk")
    if floor is not None:
        lines.append(f"Bayes risk at the smallest gamma: {floor:.3g}, {floor / LABEL_NOISE_VARIANCE:.0f}× the noise floor "
                     f"{LABEL_NOISE_VARIANCE:.0e}")
    return "\n".join(lines)


def plot_overlap(rows: list[dict[str, Any]], axes) -> None:
    """Left: test MSE against gamma (falling to the right: more overlap); right: gate ARI and the
    specialized fractions."""
    ax, ax2 = axes
    g = [r["gamma"] for r in rows]
    for method, label in _LABELS.items():
        if method == BAYES:
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


# beyond the paper (page 09): the same methods as the separation gamma of the clusters falls
register_figure(Figure("overlap", "Overlapping clusters: the separation gamma swept below the paper's 4 (beyond the paper)",
                       (MLP_RELU, MLP_REGLU, RFM, ORACLE_RFM, GATED_RFM, BAYES), "overlap",
                       variants=lambda sizes: [{"gamma": float(g)} for g in sizes.gammas]))


def page_cost(P: Profile, device: DeviceModel) -> dict[str, float]:
    """The overlap sweep's share of page 09's heavy work (:mod:`~..estimate`)."""
    o, s = P.overlap, P.sample_efficiency
    cells = len(o.Ks) * len(o.ns) * o.runs * len(o.gammas)
    nets = sum(s.max_steps * mlp_update_seconds(s.width, s.batch, MIXED_LINK_D, a, device, cells) for a in ("relu", "reglu"))
    kernels = sum(kernel_fit_seconds("rfm", n, device, c) for n in o.ns for K in o.Ks for c in (1, K, K)) * o.runs * len(o.gammas)
    return {"networks (at the update cap)": nets, "global, oracle and gated RFM": kernels}


register_cost("09_beyond", page_cost, question=1)


def _plot_figure(P: Profile, records: dict, source: str = "", cache: ResultCache | None = None):
    """``monosem plot overlap``: :func:`plot_overlap` of the cells ``{job: record}``."""
    if not records:
        raise ValueError(f"no results of overlap at profile {P.name!r} to draw: run `python -m monosem run overlap --profile {P.name}` first")
    fig, axes = plt.subplots(1, 2, figsize=(3.4 * 2 + 1.5, 3.4), layout="constrained", squeeze=False)
    plot_overlap(overlap_rows(records, cache=cache), list(axes[0]))
    return fig


register_plot("overlap", _plot_figure)
