"""Cluster coverage by m neurons with i.i.d. uniform labels (Lemma 8, Theorem 1).

The exact probability that m i.i.d. uniform labels on [K] hit every cluster (inclusion-exclusion,
evaluated in exact integer arithmetic so that the alternating sum does not cancel) beside the
paper's two bounds on the miss probability, K (1 - 1/K)^m <= K e^{-m/K}.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..checks import check_int

__all__ = ["coverage_probability", "coverage_lower_bounds", "empirical_coverage"]


def _check_mk(m: int, K: int) -> tuple[int, int]:
    K = check_int(K, "K", 1, what="the number of clusters")
    return check_int(m, "m", 0, what="the number of neurons"), K


def coverage_probability(m: int, K: int) -> float:
    """P(m i.i.d. Unif([K]) labels cover all K clusters) = sum_j (-1)^j C(K, j) (1 - j/K)^m, exactly."""
    m, K = _check_mk(m, K)
    total = sum((-1) ** j * math.comb(K, j) * (K - j) ** m for j in range(K + 1))
    return float(Fraction(total, K**m))


def coverage_lower_bounds(m: int, K: int) -> tuple[float, float]:
    """The paper's lower bounds on the coverage probability: 1 - K (1 - 1/K)^m and 1 - K e^{-m/K} (Lemma 8)."""
    m, K = _check_mk(m, K)
    return 1.0 - K * (1.0 - 1.0 / K) ** m, 1.0 - K * math.exp(-m / K)


def empirical_coverage(labels: np.ndarray, m: int, K: int, n_draws: int, seed: int) -> float:
    """Fraction of ``n_draws`` random m-subsets of a pool of simulated ``labels`` that cover all K clusters.

    The pool's labels are i.i.d. (one per independent initial direction), so a subset drawn
    without replacement is a draw of m labels from the pool's empirical label distribution.
    """
    m, K = _check_mk(m, K)
    labels = np.asarray(labels)
    if labels.ndim != 1 or m > labels.size:
        raise ValueError(f"labels must be a 1-d pool of at least m={m} labels, got shape {labels.shape}")
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(int(n_draws)):
        sub = rng.choice(labels, size=m, replace=False)
        hits += np.unique(sub).size == K
    return hits / int(n_draws)
