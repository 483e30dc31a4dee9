"""The runner: resume after an interruption, executors, batched plans, workers that share a cache."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from monosem.experiments.cache import ResultCache
from monosem.experiments.runner import run_jobs
from monosem.experiments.sweeps import sweep
from _toy_jobs import _jobs, toy_compute, toy_compute_many, toy_job


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


# ------------------------------------------------------------------- workers that share a cache
_HERE = Path(__file__).resolve().parent

_HOLDER = """
import sys, time
from monosem.experiments.cache import ResultCache
from _toy_jobs import toy_job

cache, job = ResultCache(sys.argv[1]), toy_job("toy", 1, 10, 0)
lock = cache.lock(job)
lock.acquire()
print("held", flush=True)
time.sleep(float(sys.argv[2]))
if sys.argv[3] == "save":
    cache.save(job, {"test_mse": 0.123}, 0.0)
lock.release()
"""

_WORKER = """
import os, sys, time
from pathlib import Path
from monosem.experiments.cache import ResultCache
from monosem.experiments.runner import run_jobs
from _toy_jobs import _jobs, toy_compute

def logged(job, cache=None):
    with open(sys.argv[2], "a") as fh:
        fh.write(f"{os.getpid()} {job.key()}\\n")
    time.sleep(0.4)
    return toy_compute(job)

if __name__ == "__main__":
    Path(sys.argv[3]).touch()
    while len(list(Path(sys.argv[3]).parent.glob("ready-*"))) < 2:  # start together
        time.sleep(0.05)
    run_jobs(_jobs(), logged, ResultCache(sys.argv[1]), progress=False)
"""


def _python(tmp_path: Path, source: str, *args: str, **popen) -> subprocess.Popen:
    script = tmp_path / f"script{len(list(tmp_path.glob('script*.py')))}.py"
    script.write_text(source)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(_HERE.parent), str(_HERE)]))
    return subprocess.Popen([sys.executable, str(script), *args], env=env, text=True, **popen)


def test_two_workers_on_one_cache_split_its_cells(tmp_path):
    log = tmp_path / "computed.log"
    workers = [_python(tmp_path, _WORKER, str(tmp_path / "cache"), str(log), str(tmp_path / f"ready-{i}")) for i in range(2)]
    assert [w.wait(timeout=120) for w in workers] == [0, 0]
    computed = [line.split() for line in log.read_text().splitlines()]
    keys = [key for _, key in computed]
    assert sorted(keys) == sorted(j.key() for j in _jobs())  # every cell once, by one worker
    assert len({pid for pid, _ in computed}) == 2  # and both worked
    got = run_jobs(_jobs(), toy_compute, ResultCache(tmp_path / "cache"), progress=False)
    assert [r["metrics"] for r in got.values()] == [toy_compute(j) for j in _jobs()]


def test_a_cell_another_worker_holds_is_read_once_it_finishes(tmp_path):
    holder = _python(tmp_path, _HOLDER, str(tmp_path), "1.5", "save", stdout=subprocess.PIPE)
    assert holder.stdout.readline().strip() == "held"
    calls = []

    def compute(job, cache=None):
        calls.append(job)
        return toy_compute(job)

    held, other = toy_job("toy", 1, 10, 0), toy_job("toy", 2, 10, 0)
    got = run_jobs([held, other], compute, ResultCache(tmp_path), progress=False)
    assert holder.wait(timeout=30) == 0
    assert calls == [other] and got[held]["metrics"] == {"test_mse": 0.123}


def test_a_killed_workers_lock_is_taken_over(tmp_path):
    holder = _python(tmp_path, _HOLDER, str(tmp_path), "600", "save", stdout=subprocess.PIPE)
    assert holder.stdout.readline().strip() == "held"
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    job = toy_job("toy", 1, 10, 0)
    assert (tmp_path / "toy" / f"{job.key()}.lock").exists()  # the lock file outlives its holder
    got = run_jobs([job], toy_compute, ResultCache(tmp_path), progress=False)
    assert got[job]["metrics"] == toy_compute(job)
