"""The runner: resume after an interruption, executors, batched plans."""

from __future__ import annotations

import pytest
from monosem.experiments.cache import ResultCache
from monosem.experiments.runner import run_jobs
from monosem.experiments.sweeps import sweep
from _toy_jobs import _jobs, toy_compute, toy_compute_many


class _Boom(Exception):
    pass


def test_interrupted_sweep_resumes_and_matches(tmp_path):
    jobs = _jobs()
    full = run_jobs(jobs, toy_compute, ResultCache(tmp_path / "a"), progress=False)
    calls = []

    def flaky(job, cache=None):
        calls.append(job)
        if len(calls) == 3:
            raise _Boom("killed")
        return toy_compute(job)

    c = ResultCache(tmp_path / "b")
    with pytest.raises(_Boom):
        run_jobs(jobs, flaky, c, progress=False)
    done, missing = c.status(jobs)
    assert len(done) == 2 and len(missing) == len(jobs) - 2
    calls.clear()
    resumed = run_jobs(jobs, toy_compute, c, progress=False)
    assert [r["metrics"] for r in resumed.values()] == [r["metrics"] for r in full.values()]
    # a finished cell is never recomputed
    again = run_jobs(jobs, flaky, c, progress=False)
    assert calls == [] and len(again) == len(jobs)
    # every cell records its wall time and its process CPU time
    assert all(r["timing"]["seconds"] >= 0 and r["timing"]["cpu_seconds"] >= 0 for r in again.values())


def test_process_pool_executor(tmp_path):
    jobs = _jobs()[:4]
    rec = run_jobs(jobs, toy_compute, ResultCache(tmp_path), executor="process", n_jobs=2, progress=False)
    assert [r["metrics"] for r in rec.values()] == [toy_compute(j) for j in jobs]


@pytest.mark.slow
def test_submitit_local_executor(tmp_path):
    pytest.importorskip("submitit")
    from monosem.experiments.methods import compute  # importable in the submitted processes

    jobs = sweep("fig2", "smoke", methods=["bayes"])[:2]
    rec = run_jobs(jobs, compute, ResultCache(tmp_path), executor="slurm-local", n_jobs=2, progress=False,
                   slurm={"timeout_min": 5})
    local = run_jobs(jobs, compute, ResultCache(tmp_path / "inproc"), progress=False)
    for job in jobs:
        assert rec[job]["metrics"]["test_mse"] == local[job]["metrics"]["test_mse"]


def test_bad_executor_and_jobs(tmp_path):
    with pytest.raises(ValueError, match="executor"):
        run_jobs(_jobs(), toy_compute, ResultCache(tmp_path), executor="mpi")
    with pytest.raises(ValueError, match="n_jobs"):
        run_jobs(_jobs(), toy_compute, ResultCache(tmp_path), n_jobs=0)


def test_batched_plan_gives_the_same_results(tmp_path):
    jobs = _jobs()
    seen = []

    def plan(missing):
        by_run = {}
        for j in missing:
            by_run.setdefault(j.run, []).append(j)
        seen.extend(len(b) for b in by_run.values())
        return list(by_run.values())

    batched = run_jobs(jobs, toy_compute_many, ResultCache(tmp_path / "b"), plan=plan, progress=False)
    single = run_jobs(jobs, toy_compute, ResultCache(tmp_path / "s"), progress=False)
    assert seen == [4, 4]
    assert [r["metrics"] for r in batched.values()] == [r["metrics"] for r in single.values()]
    pooled = run_jobs(jobs, toy_compute_many, ResultCache(tmp_path / "p"), plan=plan, executor="process", n_jobs=2, progress=False)
    assert [r["metrics"] for r in pooled.values()] == [r["metrics"] for r in single.values()]
