"""A stand-in method and jobs for the machinery tests (module level, so they pickle)."""

from __future__ import annotations

from monosem.experiments.cache import Job


def toy_compute(job: Job, cache=None) -> dict:
    """A deterministic stand-in for a real method (module level, so it pickles)."""
    return {"test_mse": 1.0 / (job.n * job.K) + 1e-3 * job.run, "method": job.method}


def _jobs() -> list[Job]:
    return [Job.make("toy", K, n, r, "smoke", width=8, lr=0.01) for K in (1, 2) for n in (10, 20) for r in (0, 1)]


def toy_compute_many(jobs: list[Job], cache=None) -> list[dict]:
    return [toy_compute(j) for j in jobs]
