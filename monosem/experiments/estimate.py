"""How long would the paper profile take? An extrapolation from the cells this machine measured.

Every cached result records its wall time. From the cells of the largest training size of the
current profile we extrapolate each method to the paper's grid with the cost model of its
algorithm:

* an MLP cell costs (width x batch x updates): Adam steps of a one-hidden-layer network; the paper
  trains at most 200 000 updates, and we charge the measured number of updates of the small cells
  scaled by max_steps (an upper bound: the paper's runs stop at a plateau);
* a kernel cell costs n^2 per pass over the training set (kernel matrix-vector products, which
  dominate EigenPro above 11 000 points) times the same number of passes as measured, so
  (n_paper / n)^2;
* the Bayes cell is free.

This is an order-of-magnitude estimate for *this* machine (one process), not a GPU measurement;
the page says so. A GPU session replaces it with measured times.
"""

from __future__ import annotations

from collections import defaultdict

from ..profiles import Profile, get_profile
from .cache import Job
from .sweeps import FIGURES, sweep

__all__ = ["paper_cost_estimate"]


def paper_cost_estimate(records: dict[Job, dict], figure: str, profile: str | Profile) -> dict[str, float]:
    """Estimated seconds per method to compute ``figure`` at the paper profile on this machine."""
    P, paper = get_profile(profile), get_profile("paper")
    se, pse = P.sample_efficiency, paper.sample_efficiency
    n_max = max(job.n for job in records)
    per_cell: dict[str, list[float]] = defaultdict(list)
    for job, rec in records.items():
        if job.n == n_max:
            per_cell[job.method].append(float(rec["timing"]["seconds"]))
    paper_jobs = sweep(figure, paper)
    out: dict[str, float] = {}
    for method in FIGURES[figure].methods:
        if method not in per_cell or method == "bayes":
            continue
        secs = sum(per_cell[method]) / len(per_cell[method])
        total = 0.0
        for job in (j for j in paper_jobs if j.method == method):
            if method.startswith("mlp-"):
                scale = (pse.width * pse.batch * pse.max_steps) / (se.width * se.batch * se.max_steps)
            else:
                scale = (job.n / n_max) ** 2
            total += secs * scale
        out[method] = total
    return out
