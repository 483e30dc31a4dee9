"""The MLP side of Theorem 2 and the AGOP obstruction (Appendix B.2.1-B.2.2, Lemmas 10-12).

* Lemma 10 -- :func:`exact_specialized_mlp`: two ReLUs per cluster represent f* exactly on the
  support of ``noiseless_routing_mixture(K, R)``, within the Frobenius budget
  B_R = K (1 + sqrt(1 + R^-2)).
* Lemma 11 -- :func:`rademacher_atoms_mc` (a Monte-Carlo estimate of the empirical Rademacher
  complexity of unit-norm ReLU atoms), :func:`rademacher_bound` and :func:`mlp_risk_upper_bound`.
* Lemma 12 -- :func:`ground_truth_agop` M = (alpha/K) P_V, :func:`empirical_agop` (from the
  gradients of f* on samples) and :func:`agop_bayes_lower_bound` (1 - 1/K) Var g(G), with a
  Monte-Carlo risk of the best predictor of sqrt(M) x.

Clusters are numbered from 0, as in :mod:`monosem.data`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..checks import check_int, check_positive
from ..data import noiseless_routing_mixture
from ..device import torch_generator
from .hermite import clipped_ramp_moments

__all__ = [
    "ExactSpecializedMLP",
    "exact_specialized_mlp",
    "frobenius_budget",
    "THEOREM2_CONSTANT",
    "rademacher_bound",
    "rademacher_atoms_mc",
    "mlp_risk_upper_bound",
    "ground_truth_agop",
    "empirical_agop",
    "agop_bayes_lower_bound",
    "agop_bayes_risk_mc",
]

#: C = 48 sqrt(2) of Theorem 2 (the MLP risk is at most C K^{3/2} / sqrt(n)).
THEOREM2_CONSTANT = 48.0 * math.sqrt(2.0)


def frobenius_budget(K: int, R: float = 1.0) -> float:
    """B_R = K (1 + sqrt(1 + R^-2)) of Lemma 10; B_1 = K (1 + sqrt 2) <= 3K."""
    return check_int(K, "K") * (1.0 + math.sqrt(1.0 + check_positive(R, "R") ** -2))


@dataclass(frozen=True)
class ExactSpecializedMLP:
    """Lemma 10's network F(x) = sum_j a_j phi(w_j^T x), two neurons per cluster.

    ``W`` is ``(2K, d)``: rows 2c and 2c+1 are v_c and v_c - mu_c / R^2; ``a`` is ``(2K,)`` with
    entries +1, -1. Float64 throughout.
    """

    K: int
    R: float
    W: torch.Tensor
    a: torch.Tensor

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """F(x) for an ``(n, d)`` tensor (computed in float64, returned in x's dtype)."""
        if not isinstance(x, torch.Tensor) or x.ndim != 2 or x.shape[1] != self.W.shape[1]:
            raise ValueError(f"x must be a tensor of shape (n, {self.W.shape[1]})")
        return (torch.relu(x.to(torch.float64) @ self.W.T) @ self.a).to(x.dtype)

    @property
    def width(self) -> int:
        return int(self.W.shape[0])

    @property
    def path_norm(self) -> float:
        """sum_j |a_j| ||w_j||_2 of this parameterization (an upper bound on ||F||_P)."""
        return float((self.a.abs() * self.W.norm(dim=1)).sum())

    @property
    def budget(self) -> float:
        """B_R = K (1 + sqrt(1 + R^-2))."""
        return frobenius_budget(self.K, self.R)

    def balanced(self) -> "ExactSpecializedMLP":
        """The same function with every neuron rescaled so that |a_j| = ||w_j||_2 (positive homogeneity)."""
        s = self.W.norm(dim=1).sqrt()
        return ExactSpecializedMLP(self.K, self.R, self.W / s[:, None], self.a * s)

    def frobenius_sq(self) -> float:
        """||theta||_F^2 = (1/2) sum_j (a_j^2 + ||w_j||^2) of this parameterization."""
        return 0.5 * float((self.a**2).sum() + (self.W**2).sum())


def exact_specialized_mlp(K: int, R: float = 1.0) -> ExactSpecializedMLP:
    """Lemma 10: the two-ReLUs-per-cluster network that equals f* on the data support.

    Hidden weights v_c and v_c - mu_c / R^2 with output weights +1 and -1, for the means and
    directions of ``noiseless_routing_mixture(K, R)``.
    """
    model = noiseless_routing_mixture(check_int(K, "K"), check_positive(R, "R"))
    W = torch.stack([model.directions, model.directions - model.means / R**2], dim=1).reshape(2 * K, model.d)
    a = torch.tensor([1.0, -1.0], dtype=torch.float64).repeat(K)
    return ExactSpecializedMLP(K=K, R=float(R), W=W, a=a)


# ------------------------------------------------------------------------------------ Lemma 11
def rademacher_bound(x: torch.Tensor, B: float = 1.0) -> float:
    """Lemma 11: hat R_n(F_B) <= (2B/n) (sum_i ||x_i||^2)^{1/2} for a fixed sample x."""
    x = _check_sample(x)
    return 2.0 * check_positive(B, "B") / x.shape[0] * float(x.to(torch.float64).pow(2).sum().sqrt())


def _check_sample(x: torch.Tensor) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or x.ndim != 2 or x.shape[0] < 1:
        raise ValueError("x must be a non-empty (n, d) tensor")
    return x


def rademacher_atoms_mc(
    x: torch.Tensor, n_signs: int = 200, *, restarts: int = 16, steps: int = 100, lr: float = 0.1, seed: int = 0
) -> dict[str, float]:
    """Monte-Carlo estimate of (1/n) E_eps sup_{||w|| <= 1} |sum_i eps_i phi(w^T x_i)|.

    This is the unit-norm-atom complexity that Lemma 11 multiplies by B; the bound says it is at
    most (2/n) E||sum eps_i x_i|| <= (2/n)(sum ||x_i||^2)^{1/2}. The supremum over the sphere is
    not concave, so it is approximated by projected gradient ascent from ``restarts`` random
    starts plus the two starts +-sum eps_i x_i: the estimate is a *lower* estimate of the true
    supremum (the check "estimate <= bound" is consistent with the lemma, not a proof of it).

    Returns the estimate and its Monte-Carlo standard error, the intermediate
    (2/n) E||sum eps_i x_i|| (and its standard error) and the bound, all per unit budget (B = 1).
    """
    x = _check_sample(x).to(torch.float64)
    n_signs = check_int(n_signs, "n_signs", 2)
    n, d = x.shape
    gen = torch_generator(seed)
    eps = torch.randint(2, (n_signs, n), generator=gen, dtype=torch.float64) * 2 - 1
    sum_eps_x = eps @ x  # (S, d)
    starts = torch.randn(n_signs, restarts, d, generator=gen, dtype=torch.float64)
    w = torch.cat([starts, sum_eps_x[:, None, :], -sum_eps_x[:, None, :]], dim=1)
    w = w / w.norm(dim=-1, keepdim=True).clamp_min(1e-300)
    best = torch.zeros(n_signs, dtype=torch.float64)
    for sign in (1.0, -1.0):  # sup |.| = max(sup of the sum, sup of minus the sum)
        v = w.clone()
        for _ in range(steps):
            pre = v @ x.T  # (S, restarts+2, n)
            val = sign * (torch.relu(pre) * eps[:, None, :]).sum(-1)
            best = torch.maximum(best, val.max(dim=1).values)
            grad = sign * ((pre > 0).to(x.dtype) * eps[:, None, :]) @ x
            v = v + lr * grad / grad.norm(dim=-1, keepdim=True).clamp_min(1e-300)
            v = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-300)
        pre = v @ x.T
        best = torch.maximum(best, (sign * (torch.relu(pre) * eps[:, None, :]).sum(-1)).max(dim=1).values)
    est = best / n
    mid = 2.0 * sum_eps_x.norm(dim=1) / n
    return {
        "estimate": float(est.mean()),
        "se": float(est.std() / math.sqrt(n_signs)),
        "intermediate": float(mid.mean()),
        "intermediate_se": float(mid.std() / math.sqrt(n_signs)),
        "bound": rademacher_bound(x, 1.0),
    }


def mlp_risk_upper_bound(n: float | np.ndarray, K: int, *, B: float | None = None, R: float = 1.0) -> np.ndarray | float:
    """Lemma 11's risk bound 16 B sqrt((K + R^2)/n) for clipped ERM over F_B (B >= B_R).

    ``B`` defaults to Theorem 2's budget 3K; with R = 1 the bound is
    48 K sqrt((K+1)/n) <= 48 sqrt(2) K^{3/2} / sqrt(n).
    """
    K = check_int(K, "K")
    R = check_positive(R, "R")
    B = 3.0 * K if B is None else check_positive(B, "B")
    if B < frobenius_budget(K, R) * (1 - 1e-12):
        raise ValueError(f"B={B} must be at least B_R = {frobenius_budget(K, R):.6g} for the bound to hold")
    n_arr = np.asarray(n, dtype=np.float64)
    if not np.all(np.isfinite(n_arr)) or np.any(n_arr < 1):
        raise ValueError(f"n={n!r} must be >= 1")
    out = 16.0 * B * np.sqrt((K + R**2) / n_arr)
    return float(out) if out.ndim == 0 else out


# ------------------------------------------------------------------------------------ Lemma 12
def ground_truth_agop(K: int, R: float = 1.0) -> torch.Tensor:
    """Lemma 12: M = E[grad f* grad f*^T] = (alpha / K) P_V with alpha = P(0 < G < 1).

    ``(2K, 2K)`` float64 tensor; P_V projects onto the predictive block (the last K coordinates).
    It does not depend on R (the routing block carries no gradient).
    """
    K = check_int(K, "K")
    check_positive(R, "R")
    alpha = clipped_ramp_moments()["alpha"]
    M = torch.zeros(2 * K, 2 * K, dtype=torch.float64)
    M[K:, K:] = torch.eye(K, dtype=torch.float64) * alpha / K
    return M


def empirical_agop(K: int, n: int, seed: int, R: float = 1.0) -> torch.Tensor:
    """(1/n) sum_i grad f*(x_i) grad f*(x_i)^T on n samples of ``noiseless_routing_mixture(K, R)``.

    The gradient of g(<x, v_c>) inside each point's cluster (the cluster is locally constant:
    grad f* = g'(<x, v_c>) v_c almost everywhere, what Lemma 12's proof differentiates); see
    :meth:`~monosem.data.ClusteredSingleIndexModel.population_agop`. An unbiased estimate of
    :func:`ground_truth_agop`, with error O(n^{-1/2}).
    """
    model = noiseless_routing_mixture(check_int(K, "K"), check_positive(R, "R"))
    return model.population_agop(check_int(n, "n"), seed)


def agop_bayes_lower_bound(K: int) -> float:
    """Lemma 12: every h(sqrt(M) x) has risk >= (1 - 1/K) Var g(G)."""
    return (1.0 - 1.0 / check_int(K, "K")) * clipped_ramp_moments()["variance"]


def agop_bayes_risk_mc(K: int, n: int, seed: int) -> tuple[float, float]:
    """Monte-Carlo risk of E[f* | sqrt(M) x] = (1/K) sum_j g(S_j), the best function of sqrt(M) x.

    Returns (mean, standard error); Lemma 12 says the mean equals (1 - 1/K) Var g(G).
    """
    model = noiseless_routing_mixture(check_int(K, "K"))
    x, y, _ = model.sample(int(n), seed, dtype=torch.float64, device="cpu")
    S = x[:, K:]  # the predictive coordinates: all that sqrt(M) x = sqrt(alpha/K) P_V x keeps
    best = torch.clamp(S, 0.0, 1.0).mean(dim=1)
    sq = (best - y) ** 2
    return float(sq.mean()), float(sq.std() / math.sqrt(sq.numel()))
