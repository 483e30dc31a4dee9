"""A stand-in method and jobs for the machinery tests (module level, so they pickle)."""

from __future__ import annotations

from dataclasses import dataclass

from monosem.experiments.cache import Job
from monosem.experiments.specs import DataSpec


@dataclass(frozen=True)
class ToySpec:
    """A stand-in method's settings."""

    width: int = 8
    lr: float = 0.01


def toy_job(method: str = "toy", K: int = 1, n: int = 10, run: int = 0, profile: str = "smoke", n_test: int = 8, spec=ToySpec()) -> Job:
    return Job(method, DataSpec(K, n, run, n_test), spec, profile)


def toy_compute(job: Job, cache=None) -> dict:
    """A deterministic stand-in for a real method (module level, so it pickles)."""
    return {"test_mse": 1.0 / (job.n * job.K) + 1e-3 * job.run, "method": job.method}


def _jobs() -> list[Job]:
    return [toy_job("toy", K, n, r) for K in (1, 2) for n in (10, 20) for r in (0, 1)]


def toy_compute_many(jobs: list[Job], cache=None) -> list[dict]:
    return [toy_compute(j) for j in jobs]


def cell(method: str, K: int, n: int, run: int = 0, profile: str = "long", **changes) -> Job:
    """A real method's cell at ``profile`` (its spec as the sweeps declare it, with ``changes``);
    a made-up method's has no spec."""
    import dataclasses

    from monosem.experiments.sweeps import method_spec
    from monosem.profiles import get_profile

    try:
        spec = method_spec(method, get_profile(profile))
    except ValueError:
        return Job(method, DataSpec(K, n, run, 8), None, profile)
    if changes:
        spec = dataclasses.replace(spec, **changes)
    return Job(method, DataSpec(K, n, run, 8), spec, profile)
