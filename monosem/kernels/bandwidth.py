"""Bandwidth rules for the Laplace kernel (Appendix A.2, "Global Laplace and RFM").

* ``"median"`` (label-free, the package default): the median pairwise distance between
  transformed training points.
* ``"cluster-median"`` (the paper's): the median pairwise distance *within* each cluster, then the
  median of those K values. It uses the cluster labels only to choose this one scalar.

Both are recomputed in the transformed space z = M^{1/2} x after every metric update, so a
rescaling of M (trace or max normalization of the AGOP) rescales h by the same factor and leaves
the kernel, hence the fit, unchanged.

Medians are taken over at most ``max_points`` points per set (a seeded subsample): the median of
~10^6 pairwise distances is accurate to well under a percent and costs milliseconds.
"""

from __future__ import annotations

import torch

from ..device import torch_generator

__all__ = ["BANDWIDTH_RULES", "median_distance", "cluster_median_distance", "resolve_bandwidth"]

BANDWIDTH_RULES = ("median", "cluster-median")


def median_distance(Z: torch.Tensor, *, max_points: int = 2_000, seed: int = 0) -> float:
    """Median Euclidean distance over distinct pairs of rows of ``Z`` (subsampled to ``max_points``)."""
    n = Z.shape[0]
    if n < 2:
        raise ValueError("a median pairwise distance needs at least two points")
    if n > max_points:
        Z = Z[torch.randperm(n, generator=torch_generator(seed))[:max_points].to(Z.device)]
    d = torch.pdist(Z.to(torch.float64))
    return float(d.median())


def cluster_median_distance(Z: torch.Tensor, groups: torch.Tensor, *, max_points: int = 1_000, seed: int = 0) -> float:
    """The paper's rule: the median over clusters of the within-cluster median pairwise distance.

    Clusters with fewer than two points are skipped.
    """
    meds = []
    for k in torch.unique(groups).tolist():
        members = Z[groups == k]
        if members.shape[0] >= 2:
            meds.append(median_distance(members, max_points=max_points, seed=seed + int(k)))
    if not meds:
        raise ValueError("bandwidth='cluster-median' needs a cluster with at least two points")
    return float(torch.tensor(meds, dtype=torch.float64).median())


def resolve_bandwidth(rule, Z: torch.Tensor, groups: torch.Tensor | None, *, seed: int = 0) -> float:
    """The bandwidth for transformed training inputs ``Z``: a fixed positive number or a rule."""
    if isinstance(rule, str):
        if rule == "median":
            h = median_distance(Z, seed=seed)
        elif rule == "cluster-median":
            if groups is None:
                raise ValueError("bandwidth='cluster-median' needs cluster labels: call fit(X, y, groups=c)")
            h = cluster_median_distance(Z, groups, seed=seed)
        else:
            raise ValueError(f"bandwidth={rule!r} is not allowed; use a positive number or one of {list(BANDWIDTH_RULES)}")
        if not h > 0:
            raise ValueError(f"the {rule!r} rule gave bandwidth {h!r}: the (transformed) training points coincide")
        return h
    if isinstance(rule, bool):
        raise ValueError(f"bandwidth={rule!r} must be a positive number or one of {list(BANDWIDTH_RULES)}")
    try:
        h = float(rule)
    except (TypeError, ValueError) as err:
        raise ValueError(f"bandwidth={rule!r} must be a positive number or one of {list(BANDWIDTH_RULES)}") from err
    if not (h > 0 and h < float("inf")):
        raise ValueError(f"bandwidth={rule!r} must be a positive finite number or one of {list(BANDWIDTH_RULES)}")
    return h
