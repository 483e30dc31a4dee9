"""Theorem 2's proof checked lemma by lemma (page 08, Appendix B): each function returns the
numbers of one check as a DataFrame (or a figure), from :mod:`monosem.theory`.

Appendix B.2.1 (the MLP side): the exact specialized network and its Frobenius budget
(Lemma 10), the Rademacher complexity of its atoms (Lemma 11). Appendix B.2.2 (the AGOP side): the
Bayes risk of the best predictor of the ground-truth AGOP's coordinates (Lemma 12). Appendix
B.2.3 (the kernel side): the clipped ramp's Hermite coefficients (Lemma 13), the harmonic
dimensions and energies (Lemma 14), the invariant random-subspace bound (Lemma 15), the Lemma 16
lower bound and the Lemma 17 floor.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import sympy as sp
import torch

from ... import plots
from ... import theory as T
from ...data import noiseless_routing_mixture

__all__ = ["specialized_mlp_table", "rademacher_table", "tail_exponent", "agop_bayes_table", "hermite_table", "plot_hermite", "harmonic_table",
           "plot_harmonic", "invariant_subspace_table", "plot_kernel_bound"]


def specialized_mlp_table(seed: int) -> pd.DataFrame:
    """Lemma 10: the exact specialized network of K clusters at separation R fits f* to round-off
    on 20 000 samples; its path norm, budget B_R and balanced squared Frobenius norm, and B_R <= 3K.
    The error is reported as a bound: its last digits are round-off, which differs between CPUs."""
    rows = []
    for K, R in [(2, 1.0), (5, 1.0), (10, 1.0), (4, 0.5), (4, 3.0)]:
        net = T.exact_specialized_mlp(K, R)
        x, y, _ = noiseless_routing_mixture(K, R).sample(20_000, seed, dtype=torch.float64)
        rows.append({"K": K, "R": R, "max|F - f*| < 1e-12": (net(x) - y).abs().max().item() < 1e-12,
                     "path norm": f"{net.path_norm:.6f}", "B_R": f"{net.budget:.6f}",
                     "||theta||_F^2 balanced": f"{net.balanced().frobenius_sq():.6f}", "B_R <= 3K": net.budget <= 3 * K})
    return pd.DataFrame(rows)


def rademacher_table(seed: int) -> pd.DataFrame:
    """Lemma 11: a Monte-Carlo estimate of the atoms' Rademacher complexity, the lemma's
    intermediate quantity and its bound (2/n)(sum ||x||^2)^(1/2), at three (K, n), with what each
    step of the proof gives away: the contraction step (intermediate / estimate) and Jensen's
    (bound / intermediate)."""
    rows = []
    for K, n in [(2, 100), (4, 200), (8, 200)]:
        x, _, _ = noiseless_routing_mixture(K).sample(n, seed, dtype=torch.float64)
        rc = T.rademacher_atoms_mc(x, n_signs=100, restarts=8, steps=50, seed=seed)
        rows.append({"K": K, "n": n, "MC estimate (se)": f"{rc['estimate']:.4f} ({rc['se']:.4f})",
                     "(2/n) E||sum eps x|| (se)": f"{rc['intermediate']:.4f} ({rc['intermediate_se']:.4f})",
                     "bound (2/n)(sum ||x||^2)^1/2": f"{rc['bound']:.4f}", "estimate <= bound": rc["estimate"] <= rc["bound"],
                     "contraction step": rc["intermediate"] / rc["estimate"], "Jensen step": rc["bound"] / rc["intermediate"]})
    return pd.DataFrame(rows)


def tail_exponent(r0: np.ndarray, r_min: int = 10) -> tuple[float, int, int]:
    """The exponent of a power law fitted (least squares on logs) to Lemma 13's Parseval tail
    sum_{r > r0} ghat_r^2 over the ``r0`` at least ``r_min``; with the range it used."""
    r = np.asarray(r0)[np.asarray(r0) >= r_min]
    slope = float(np.polyfit(np.log(r), np.log(T.hermite_tail(r)), 1)[0])
    return slope, int(r.min()), int(r.max())


def agop_bayes_table(seed: int) -> pd.DataFrame:
    """Lemma 12: the Monte-Carlo risk of (1/K) sum_j g(z_j), the best predictor that reads the
    AGOP's coordinates, against its closed form (1 - 1/K) Var g."""
    rows = []
    for K in (2, 4, 16, 32):
        risk, se = T.agop_bayes_risk_mc(K, 100_000, seed)
        rows.append({"K": K, "MC risk of (1/K) sum_j g(z_j) (se)": f"{risk:.4f} ({se:.4f})",
                     "(1 - 1/K) Var g": f"{T.agop_bayes_lower_bound(K):.4f}",
                     "within 3 se": abs(risk - T.agop_bayes_lower_bound(K)) < 3 * se})
    return pd.DataFrame(rows)


def hermite_table(r_max: int = 12) -> pd.DataFrame:
    """Lemma 13: the clipped ramp's Hermite coefficients, exact (SymPy), in floating point, the
    closed form against quadrature, and exact against the lemma's closed form."""
    g_float = T.clipped_ramp_hermite_coefficients(r_max)
    rows = []
    for r in range(r_max + 1):
        exact = T.clipped_ramp_hermite_exact(r)
        rows.append({"r": r, "exact (SymPy)": str(exact), "float": f"{g_float[r]:.7f}",
                     # a number, not text: the book's tables print it in their one format
                     "|closed - quad|": float(abs(g_float[r] - T.clipped_ramp_hermite_quadrature(r))),
                     "exact - closed": "0" if r < 2 else str(sp.simplify(exact - T.lemma13_closed_form_exact(r)))})
    return pd.DataFrame(rows).set_index("r")


def plot_hermite(r0: np.ndarray):
    """The coefficients ghat_r for r = 2 ... 40, and the Parseval tail sum_{r > r0} ghat_r^2."""
    with plots.paper_style():
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(plots.PAGE_WIDTH, 3.2), layout="constrained")
        r = np.arange(2, 41)
        ax1.bar(r, T.clipped_ramp_hermite_coefficients(40)[2:], color="C0")
        ax1.set(xlabel="$r$", ylabel=r"$\widehat g_r$", title="Hermite coefficients of the clipped ramp")
        ax2.loglog(r0, T.hermite_tail(r0), "o-", ms=3, label=r"$\sum_{r>r_0}\widehat g_r^2$")
        ax2.loglog(r0, 0.1 * r0**-1.5, "k:", label=r"$0.1\, r_0^{-3/2}$")
        ax2.set(xlabel="$r_0$", title="Parseval tail", ylabel="")
        ax2.legend()
    return fig


def harmonic_table() -> tuple[pd.DataFrame, bool]:
    """Lemma 14: the harmonic dimension H_{r,K} by its formula and as the dimension of the
    Laplacian's kernel, and the directional energy alpha_{r,K} as a product, a finite sum and a
    projection, exactly; with whether all three agree in every row."""
    rows = []
    for K, r in [(K, r) for K in (2, 3, 4) for r in range(2, 6)] + [(5, 2), (5, 3), (6, 2), (6, 3)]:
        rows.append((K, r, T.harmonic_dimension(r, K), T.harmonic_dimension_direct(r, K),
                     T.harmonic_energy_exact(r, K), T.harmonic_energy_sum(r, K), T.harmonic_energy_direct(r, K)))
    frame = pd.DataFrame([(K, r, h1, h2, str(a1), str(a2), str(a3)) for K, r, h1, h2, a1, a2, a3 in rows],
                         columns=["K", "r", "H formula", "dim ker Lap", "alpha product", "finite sum", "projection"]).set_index(["K", "r"])
    return frame, all(h1 == h2 and a1 == a2 == a3 for _, _, h1, h2, a1, a2, a3 in rows)


def plot_harmonic(Ks: np.ndarray):
    """alpha_{r,K} and H_{r,K} / (K^r / r!) against K for a few r."""
    with plots.paper_style():
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(plots.PAGE_WIDTH, 3.2), layout="constrained")
        for r in (2, 3, 4, 6, 10):
            ax1.semilogx(Ks, [T.harmonic_energy(r, int(K)) for K in Ks], label=f"r = {r}")
            ax2.loglog(Ks, [T.harmonic_dimension(r, int(K)) / (float(K) ** r / math.factorial(r)) for K in Ks], label=f"r = {r}")
        ax1.set(xlabel="$K$", ylabel=r"$\alpha_{r,K}$", title="directional energy")
        ax2.set(xlabel="$K$", ylabel=r"$H_{r,K} / (K^r/r!)$", title="harmonic dimension")
        ax1.legend()
    return fig


def invariant_subspace_table(seed: int) -> pd.DataFrame:
    """Lemma 15, the invariant random-subspace bound: for a random unit v in a D-dimensional irreducible
    space, the Monte-Carlo mean squared distance to an N-dimensional subspace against the bound
    (1 - N/D)_+ ||v||^2, isotropic and (beyond the lemma) anisotropic."""
    rows = []
    for K, N in [(3, 1), (3, 3), (5, 4), (5, 10), (8, 20)]:
        iso = T.invariant_subspace_mc(K, N, 4_000, seed=seed)
        aniso = T.invariant_subspace_mc(K, N, 4_000, seed=seed, anisotropy=5.0)
        rows.append({"K": K, "N": N, "D": int(iso["D"]), "MC E dist^2": iso["mean"], "se": iso["se"],
                     "(1-N/D)+ ||v||^2": iso["bound"], "anisotropic MC": aniso["mean"]})
    return pd.DataFrame(rows).set_index(["K", "N"])


def plot_kernel_bound(var_g: float):
    """Lemma 16's kernel/RFM lower bound at n = K^A (solid) against Lemma 11's MLP upper bound
    at the same n (dashed), with Lemma 17's floors (dotted) and the trivial risk Var g."""
    Ks = 2 ** np.arange(1, 25)
    with plots.paper_style():
        fig, ax = plt.subplots(figsize=(plots.PAGE_WIDTH, 5.2), layout="constrained")
        for i, A in enumerate((1, 2, 3, 4)):
            ax.loglog(Ks, [T.kernel_lower_bound(float(K) ** A, int(K)) for K in Ks], "-", color=f"C{i}",
                      label=f"kernel/RFM LB, $n = K^{A}$")
            ax.axhline(T.polynomial_budget_floor(A), color=f"C{i}", lw=0.6, ls=":")
            ax.loglog(Ks, [T.mlp_risk_upper_bound(float(K) ** A, int(K)) for K in Ks], "--", color=f"C{i}", lw=1)
        ax.axhline(var_g, color="k", lw=0.8, label=r"Var $g(G)$ (trivial risk)")
        ax.plot([], [], "k--", lw=1, label="MLP upper bound, same $n$")
        ax.plot([], [], "k:", lw=0.6, label="Lemma 17 floor")
        ax.set(xlabel="$K$", ylabel="risk bound", ylim=(1e-4, 1e3),
               title="Lemma 16 lower bound (solid),\nLemma 11 MLP upper bound (dashed)")
        fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2)
    return fig
