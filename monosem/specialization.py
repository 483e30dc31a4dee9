"""Neuron-specialization measures of Section 3.1 / Appendix A.1 (the Figure 1 table).

* importance I_j = |a_j| ||w_j|| (ordinary) or |a_j| ||w_{g,j}|| ||w_{v,j}|| (gated);
* the active set: the smallest leading set of neurons, by decreasing importance, holding at least
  99.9 % of the total importance;
* alignment A_j = max_c |<w_j, v_c>| / ||w_j||  (eq. 1, unit v_c);
* dominance D_j = |[w_j]_{k(c_j)}| / max_{l != k(c_j)} |[w_j]_l|  (eq. 2), with c_j the
  maximizer of |<w_j, v_c>| and k(c) the coordinate that carries v_c (v_c = e_{K+c} in Figure 1);
* the table: per weight branch (gate and value separately for gated nets, on the same active
  set), the active count and the fractions with A >= 0.71, A >= 0.90, D > 1, D > 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from matplotlib.patches import Patch

from . import plots
from .checks import check_interval
from .models import MLP

__all__ = [
    "PAPER_FIGURE1",
    "PAPER_FIGURE1_WIDTH",
    "SpecializationRow",
    "importance",
    "active_set",
    "alignment",
    "predictive_alignment",
    "dominance",
    "specialization_table",
    "top_aligned",
    "plot_neuron_weights",
]

#: the width of the networks of the paper's Figure 1 (Appendix A.1)
PAPER_FIGURE1_WIDTH = 2048
#: Figure 1 of the paper (width PAPER_FIGURE1_WIDTH): branch -> (active neurons, % A >= 0.71, % A >= 0.90).
#: The D columns of the figure are not recoverable from the text, so they are not listed.
PAPER_FIGURE1: dict[str, tuple[int, float, float]] = {
    "relu": (613, 45.5, 33.4),
    "gelu": (1710, 49.9, 28.2),
    "reglu gate": (453, 73.1, 56.1),
    "reglu value": (453, 28.5, 3.8),
    "swiglu gate": (551, 43.6, 19.1),
    "swiglu value": (551, 46.3, 14.9),
}


@dataclass(frozen=True)
class SpecializationRow:
    """One row of the Figure 1 table. Fractions are in [0, 1]."""

    branch: str
    n_active: int
    width: int
    frac_A071: float
    frac_A090: float
    frac_D1: float
    frac_D2: float


def importance(model: MLP) -> torch.Tensor:
    """I_j (Appendix A.1, "Active-neuron criterion"), ``(width,)`` in float64.

    The output scale alpha of a lazily scaled network multiplies every I_j alike, so it is left
    out: the active set does not depend on it.
    """
    a = model.a.detach().double().abs()
    norms = [w.double().norm(dim=1) for w in model.branches().values()]
    out = a
    for n in norms:
        out = out * n
    return out


def active_set(imp: torch.Tensor, fraction: float = 0.999) -> torch.Tensor:
    """Indices of the smallest leading set of neurons (by decreasing importance) whose importance
    adds up to at least ``fraction`` of the total; in decreasing order of importance."""
    if not 0 < fraction <= 1:
        check_interval(fraction, "fraction", 0, 1, closed="right")
    imp = imp.detach().double().reshape(-1)
    if bool((imp < 0).any()) or not bool(torch.isfinite(imp).all()):
        raise ValueError("importances must be finite and non-negative")
    total = float(imp.sum())
    if total == 0:
        return torch.zeros(0, dtype=torch.long, device=imp.device)
    order = torch.argsort(imp, descending=True, stable=True)
    cum = torch.cumsum(imp[order], 0)
    # a relative slack of 1e-12 keeps round-off from demanding one neuron more than needed
    # the value searched for lives where ``cum`` does (CUDA refuses a search across devices)
    value = torch.tensor([fraction * total * (1 - 1e-12)], dtype=torch.float64, device=cum.device)
    k = int(torch.searchsorted(cum, value)) + 1
    return order[: min(k, imp.numel())]


def _coordinates(directions: torch.Tensor) -> torch.Tensor:
    """The coordinate k(c) carrying each direction; D_j is defined for coordinate-axis v_c only."""
    dirs = directions.detach().double()
    k = dirs.abs().argmax(dim=1)
    onehot = torch.zeros_like(dirs).scatter_(1, k.unsqueeze(1), 1.0)
    if not torch.allclose(dirs.abs(), onehot, atol=1e-9):
        raise ValueError("dominance D_j (eq. 2) needs directions that are standard basis vectors (+-e_k)")
    return k


def alignment(W: torch.Tensor, directions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A_j (eq. 1) for every row of ``W`` (m, d) and the maximizing cluster c_j.

    ``directions`` is (K, d) with unit rows. Rows of zero norm get A_j = 0.
    """
    W, V = W.detach().double(), directions.detach().to(W.device).double()
    if W.ndim != 2 or V.ndim != 2 or W.shape[1] != V.shape[1]:
        raise ValueError(f"W (m, d) and directions (K, d) must share d, got {tuple(W.shape)} and {tuple(V.shape)}")
    proj = (W @ V.T).abs()
    best, c = proj.max(dim=1)
    norm = W.norm(dim=1)
    A = torch.where(norm > 0, best / norm.clamp_min(1e-300), torch.zeros_like(best))
    return A, c


def predictive_alignment(W: torch.Tensor, directions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A_j (eq. 1) measured within the predictive coordinates, the coordinates on which some
    direction is non-zero (the mixed-link model's ten predictive coordinates; the paper's Figure 1
    data has each v_c on one of them): max_c |<w_j, v_c>| / ||P w_j||, with P the projection onto
    them, the maximizing c_j, and the share of ||w_j|| off them, sqrt(1 - ||P w_j||^2 / ||w_j||^2).

    Eq. (1) divides by the whole norm, so a unit that also reads the routing coordinates (which a
    unit of one cluster must, to be active there alone) has A_j <= ||P w_j|| / ||w_j||: below 0.71
    once half its squared norm routes. This measure asks the paper's question of the predictive
    part alone. Rows with no predictive weight get 0."""
    W, V = W.detach().double(), directions.detach().to(W.device).double()
    if W.ndim != 2 or V.ndim != 2 or W.shape[1] != V.shape[1]:
        raise ValueError(f"W (m, d) and directions (K, d) must share d, got {tuple(W.shape)} and {tuple(V.shape)}")
    support = V.abs().sum(0) > 0
    Wp = W[:, support]
    best, c = (Wp @ V[:, support].T).abs().max(dim=1)
    norm_p, norm = Wp.norm(dim=1), W.norm(dim=1)
    A = torch.where(norm_p > 0, best / norm_p.clamp_min(1e-300), torch.zeros_like(best))
    off = torch.where(norm > 0, (1 - (norm_p / norm.clamp_min(1e-300)).square()).clamp_min(0).sqrt(), torch.zeros_like(norm))
    return A, c, off


def dominance(W: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
    """D_j (eq. 2): the maximizing predictive coordinate over the largest other coordinate
    (``inf`` if every other coordinate is zero)."""
    W = W.detach().double()
    k = _coordinates(directions).to(W.device)
    _, c = alignment(W, directions)
    kj = k[c]
    absW = W.abs()
    top = absW.gather(1, kj.unsqueeze(1)).squeeze(1)
    others = absW.scatter(1, kj.unsqueeze(1), -1.0).max(dim=1).values
    return torch.where(others > 0, top / others.clamp_min(1e-300), torch.full_like(top, math.inf))


def specialization_table(model: MLP, directions: torch.Tensor, fraction: float = 0.999) -> list[SpecializationRow]:
    """The Figure 1 table for one network: one :class:`SpecializationRow` per weight branch
    ("relu"; or "reglu gate" and "reglu value", ...), all on the same active set."""
    act = active_set(importance(model), fraction)
    rows = []
    for name, W in model.branches().items():
        Wa = W[act.to(W.device)]
        n = int(act.numel())
        if n == 0:
            rows.append(SpecializationRow(name, 0, model.width, math.nan, math.nan, math.nan, math.nan))
            continue
        A, _ = alignment(Wa, directions)
        D = dominance(Wa, directions)
        rows.append(
            SpecializationRow(
                branch=name, n_active=n, width=model.width,
                frac_A071=float((A >= 0.71).double().mean()), frac_A090=float((A >= 0.90).double().mean()),
                frac_D1=float((D > 1).double().mean()), frac_D2=float((D > 2).double().mean()),
            )
        )
    return rows


def top_aligned(model: MLP, directions: torch.Tensor, *, k: int = 4, min_A: float = 0.9, max_A: float = 1.0,
                min_D: float = 0.0, branch: str | None = None, fraction: float = 0.999) -> torch.Tensor:
    """The ``k`` highest-importance active neurons whose A_j lies in ``[min_A, max_A]`` and whose
    D_j exceeds ``min_D`` (Figure 1 bottom: ``min_A=0.9``; Figure 5: moderate A, large D).
    Returns neuron indices, most important first."""
    branches = model.branches()
    name = branch or next(iter(branches))
    if name not in branches:
        raise ValueError(f"branch={name!r} is not one of {list(branches)}")
    act = active_set(importance(model), fraction)
    W = branches[name][act.to(branches[name].device)]
    A, _ = alignment(W, directions)
    D = dominance(W, directions)
    keep = (A >= min_A) & (A <= max_A) & (D > min_D)
    return act[keep.cpu()][:k]


def plot_neuron_weights(axes, W: torch.Tensor, K: int, *, titles: list[str] | None = None) -> None:
    """Coordinate-wise |w| of several neurons, one axis each (Figure 1 bottom, Figure 5).

    Coordinates ``0..K-1`` are the routing block (cluster means), ``K..2K-1`` the predictive block
    (v_c = e_{K+c}), the rest nuisance; the blocks are coloured and the predictive block shaded.
    """
    W = plots.to_numpy(W.detach().double() if hasattr(W, "detach") else W)
    axes = np.atleast_1d(axes)
    if W.ndim != 2 or len(axes) < W.shape[0]:
        raise ValueError(f"need one axis per neuron: {W.shape[0] if W.ndim == 2 else '?'} neurons, {len(axes)} axes")
    d = W.shape[1]
    colors = np.array(["tab:gray"] * K + ["tab:red"] * K + ["tab:blue"] * (d - 2 * K))
    for i, ax in enumerate(axes[: W.shape[0]]):
        ax.axvspan(K - 0.5, 2 * K - 0.5, color="tab:red", alpha=0.08, linewidth=0)
        ax.bar(np.arange(1, d + 1) - 1, np.abs(W[i]), color=colors, width=0.8)
        ax.set_xticks([0, K, 2 * K, d - 1], [1, K + 1, 2 * K + 1, d])
        if titles is not None:
            ax.set_title(titles[i])
    axes[0].set_ylabel("|w| per coordinate")
    axes[0].legend(handles=[Patch(color=c, label=l) for c, l in (("tab:gray", "routing"), ("tab:red", "predictive"), ("tab:blue", "nuisance"))],
                   loc="upper right", handlelength=1)
