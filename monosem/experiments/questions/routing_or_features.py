"""Page 09, question 4: **routing or features?** The MLP-gated predictor of Section 3.3 does two
things with the trained network: it *routes* every point to a gate (K-means on the contribution
profiles) and it *transforms* the gate's inputs by the learned metric G_c (eq. 13-14). The sweep
``swaps`` (declared here) exchanges one at a time for what the oracle knows, with
Laplace local models throughout: learned gates without the metric (``gated-laplace-iso``), true
clusters with the learned metric (``oracle-laplace-gc``), beside the paper's pipeline
(``gated-laplace``) and the Laplace oracle (true clusters, no metric). The gain of each swap, per
K, says which half carries the result.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import NullLocator

from ._tables import fmt, frame
from ..cache import Job
from ...profiles import Profile
from ..specs import MIXED_LINK_D
from ..estimate import DeviceModel, kernel_fit_seconds, mlp_update_seconds
from ..families.gated import GATED_LAPLACE, GATED_RFM, register_gated
from ..families.kernels import ORACLE_LAPLACE, ORACLE_RFM
from ..families.networks import MLP_RELU
from ..sweeps import Figure, register_figure
import matplotlib.pyplot as plt
from ..registry import register_cost, register_plot

__all__ = ["GATED_LAPLACE_ISO", "ORACLE_LAPLACE_GC", "SWAP_GRID", "swap_rows", "swaps_frame", "swap_findings", "swap_answer", "plot_swaps"]

#: the swapped pipelines, Laplace local models: learned gates without the learned metric, and
#: true-cluster routing with it (the paper's ``gated-laplace`` is (learned, learned);
#: ``oracle-laplace`` is (true, isotropic))
GATED_LAPLACE_ISO, ORACLE_LAPLACE_GC = "gated-laplace-iso", "oracle-laplace-gc"
register_gated(GATED_LAPLACE_ISO, local="laplace", routing="learned", features="isotropic")
register_gated(ORACLE_LAPLACE_GC, local="laplace", routing="true", features="learned")

#: the 2 x 2 design of the swaps figure: (routing, local features) -> method (Laplace locals)
SWAP_GRID = {("learned", "isotropic"): GATED_LAPLACE_ISO, ("learned", "learned"): GATED_LAPLACE,
             ("true", "isotropic"): ORACLE_LAPLACE, ("true", "learned"): ORACLE_LAPLACE_GC}
#: the references beside it: the paper's local RFM behind learned gates, the RFM oracle, the MLP
_SWAP_REFS = {GATED_RFM: "gated RFM", ORACLE_RFM: "RFM oracle", MLP_RELU: "ReLU MLP"}
#: the routings of :data:`SWAP_GRID`, and their labels
_ROUTINGS = {"learned": "learned gates", "true": "true clusters"}


def swap_rows(records: dict[Job, dict]) -> list[dict[str, Any]]:
    """One row per K (ascending): the test MSE of the four Laplace pipelines of
    :data:`SWAP_GRID` and of the references, and the learned gates' ARI against the clusters."""
    rows = []
    for K in sorted({j.K for j in records}):
        mine = {j.method: rec["metrics"] for j, rec in records.items() if j.K == K}
        row: dict[str, Any] = {"K": K, "n": next(j.n for j in records if j.K == K)}
        for method in (*SWAP_GRID.values(), *_SWAP_REFS):
            row[method] = mine[method]["test_mse"] if method in mine else None
        row["gate_ari"] = mine.get(GATED_LAPLACE, {}).get("gate_ari_test")
        rows.append(row)
    return rows


def swaps_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """:func:`swap_rows` as a table, one row per K: n, the learned gates' ARI against the true
    clusters, the test MSE of the four local Laplace predictors of :data:`SWAP_GRID` (routing,
    local features: the isotropic input x or the learned metric G_c) and of the references."""
    grid = {key: f"{_ROUTINGS[key[0]]}, {'learned G_c' if key[1] == 'learned' else 'isotropic (x)'} test MSE" for key in SWAP_GRID}
    refs = {m: f"{label} test MSE" for m, label in _SWAP_REFS.items()}
    out = [{"K": r["K"], "n": r["n"], "learned gates' ARI": r["gate_ari"]}
           | {grid[key]: r[m] for key, m in SWAP_GRID.items()} | {refs[m]: r[m] for m in _SWAP_REFS} for r in rows]
    return frame(out, ["K", "n", "learned gates' ARI", *grid.values(), *refs.values()], "K")


def _ratio(a, b) -> float | None:
    return a / b if a is not None and b is not None else None


def _gains(r: dict[str, Any]) -> tuple[float | None, float | None, str | None]:
    """At one K, under the paper's learned gates and metric: the features' gain (isotropic /
    learned metric), the routing's gain (learned gates / true clusters), and which half carries
    more (``None`` until both are computed)."""
    g = {key: r[m] for key, m in SWAP_GRID.items()}
    feat = _ratio(g[("learned", "isotropic")], g[("learned", "learned")])
    route = _ratio(g[("learned", "learned")], g[("true", "learned")])
    if feat is None or route is None:
        return feat, route, None
    return feat, route, "the features carry more" if feat > route else "the routing carries more"


def swap_answer(rows: list[dict[str, Any]]) -> str:
    """The question's answer in one line per K: which half carries the result, with both gains."""
    out = [f"K = {r['K']}: {which} (metric MSE / {feat:.2f}, routing MSE / {route:.2f})"
           for r in rows for feat, route, which in (_gains(r),) if which is not None]
    return "; ".join(out) or "no K has a result yet"


def swap_findings(rows: list[dict[str, Any]]) -> str:
    """The verdict, computed per K: the factor by which each swap lowers the test MSE of the
    paper's pipeline's neighbours. *Features* gain: isotropic / learned metric, under learned
    gates (and under true clusters); *routing* gain: learned gates / true clusters, with the
    learned metric (and without). The larger gain, under the paper's learned gates and metric, names
    the half that carries the result at that K; the last line gives what is left to the RFM oracle."""
    lines = []
    for r in rows:
        g = {key: r[m] for key, m in SWAP_GRID.items()}
        feat, route, which = _gains(r)
        feat_true = _ratio(g[("true", "isotropic")], g[("true", "learned")])
        route_iso = _ratio(g[("learned", "isotropic")], g[("true", "isotropic")])
        if which is None:
            lines.append(f"K = {r['K']}: not every pipeline computed yet")
            continue
        lines += [f"K = {r['K']}: the learned metric: MSE / {feat:.2f} (learned gates), "
                  f"/ {fmt(feat_true, '.2f')} (true clusters)",
                  f"  true routing: MSE / {route:.2f} (with the metric), / {fmt(route_iso, '.2f')} (without)",
                  f"  -> {which}",
                  f"  local RFM instead of Laplace behind the learned gates: MSE / "
                  f"{fmt(_ratio(g[('learned', 'learned')], r[GATED_RFM]), '.2f')}",
                  f"  paper's pipeline / Laplace oracle "
                  f"{fmt(_ratio(g[('learned', 'learned')], g[('true', 'isotropic')]), '.2f')}; "
                  f"gated RFM / RFM oracle {fmt(_ratio(r[GATED_RFM], r[ORACLE_RFM]), '.2f')}"]
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
    for (routing, feats), method in SWAP_GRID.items():
        ys = [r[method] if r[method] is not None else np.nan for r in rows]
        ax.plot(Ks, ys, styles[routing], marker=markers[feats],
                label=f"{_ROUTINGS[routing]}, {'learned $G_c$' if feats == 'learned' else 'isotropic'}")
    for method, style in ((GATED_RFM, ":"), (ORACLE_RFM, "-.")):
        ax.plot(Ks, [r[method] if r[method] is not None else np.nan for r in rows], style, color="0.5",
                label=_SWAP_REFS[method])
    ax.set(xscale="log", yscale="log", xlabel="K (clusters)", ylabel="test MSE")
    ax.set_xticks(Ks, [str(k) for k in Ks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.legend()


# beyond the paper (page 09): the Section 3.3 pipeline with its routing (learned gates / true
# clusters) and its local features (learned metric G_c / none) swapped; Laplace local models
register_figure(Figure("swaps", "Routing or features? The Section 3.3 pipeline with its gates or its metric swapped (beyond the paper)",
                       (MLP_RELU, GATED_LAPLACE_ISO, GATED_LAPLACE, ORACLE_LAPLACE, ORACLE_LAPLACE_GC, GATED_RFM, ORACLE_RFM), "swaps"))


def page_cost(P: Profile, device: DeviceModel) -> dict[str, float]:
    """The swaps sweep's share of page 09's heavy work (:mod:`~..estimate`): its two new
    pipelines (per-gate Laplace fits) and whatever of it page 05 has not computed (its source
    networks and kernels)."""
    w, g, s = P.swaps, P.gates, P.sample_efficiency
    new = [(K, n) for K in w.Ks for n in w.ns if K not in g.Ks or n not in g.ns]
    swapped = sum(kernel_fit_seconds("laplace", n, device, K) for K in w.Ks for n in w.ns) * 2 * w.runs
    rest = s.max_steps * mlp_update_seconds(s.width, s.batch, MIXED_LINK_D, "relu", device, len(new) * w.runs) if new else 0.0
    rest += sum(kernel_fit_seconds(m, n, device, K) for m in ("rfm", "laplace") for K, n in new for _ in (0, 1)) * w.runs
    return {"swapped gated Laplace": swapped, "swaps not shared with page 05": rest}


register_cost("09_beyond", page_cost, question=4)


def _plot_figure(P: Profile, records: dict, source: str = "", cache=None):
    """``monosem plot swaps``: :func:`plot_swaps` of the cells ``{job: record}``."""
    if not records:
        raise ValueError(f"no results of swaps at profile {P.name!r} to draw: run `python -m monosem run swaps --profile {P.name}` first")
    fig, axes = plt.subplots(1, 1, figsize=(3.4 + 1.5, 3.4), layout="constrained", squeeze=False)
    plot_swaps(swap_rows(records), axes[0][0])
    return fig


register_plot("swaps", _plot_figure)
