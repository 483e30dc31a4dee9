"""Compute the ``init-gap`` cells whose network is already trained in the cache, and only those.

A gap cell reads its network from the cache and would train it first if it were missing; run
beside the ``init-screen`` / ``init-paper`` workers, this never trains a network a worker may be
training. Usage (from the repository root):

    MONOSEM_CACHE=/path/to/cache OMP_NUM_THREADS=1 .venv/bin/python scripts/init_gaps.py
    MONOSEM_CACHE=/path/to/cache .venv/bin/python -m monosem record init-gap --profile long
"""

from __future__ import annotations

from monosem.experiments.cache import Job, ResultCache
from monosem.experiments.families.networks import load_mlp
from monosem.experiments.methods import compute_many, plan
from monosem.experiments.runner import run_jobs
from monosem.experiments.sweeps import sweep


def ready(cache: ResultCache) -> list[Job]:
    """The ``init-gap`` cells not yet in ``cache`` whose network is there, loadable."""
    out = []
    for gap in sweep("init-gap", "long"):
        src = Job(f"mlp-{gap.spec.network.activation}", gap.data, gap.spec.network, gap.profile)
        if cache.has(gap) or not cache.has(src):
            continue
        try:
            load_mlp(src, cache)
        except FileNotFoundError:
            continue
        out.append(gap)
    return out


if __name__ == "__main__":
    cache = ResultCache()
    jobs = ready(cache)
    print(f"{len(jobs)} gap cells ready in {cache.root}")
    if jobs:
        run_jobs(jobs, compute_many, cache, n_jobs=1, plan=plan)
