"""Run a list of jobs through the result cache, in-process, in a process pool, or on SLURM.

Every executor stores each finished job's result file as soon as it finishes, from the process
that computed it; an interrupted sweep therefore keeps everything that finished, and the next call
computes only what is missing. A job is computed only under its cell's lock
(:meth:`~.cache.ResultCache.lock`): workers that share a cache (two ``monosem run`` of one figure)
split its cells, each passing over the cells another one holds and coming back to them at the end
(to read their results, or to compute them if their holder died).
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, Sequence

from ..checks import check_int
from ..progress import progress_bar
from .cache import Job, ResultCache

__all__ = ["EXECUTORS", "check_slurm", "run_jobs", "compute_and_store"]

EXECUTORS = ("inprocess", "process", "slurm", "slurm-local")

#: ``compute(job, cache=...) -> metrics`` for one job, or ``compute(jobs, cache=...) ->
#: [metrics, ...]`` for a batch (see ``plan``): a batch of MLP cells trains as one stack of
#: models. ``cache`` lets a computation keep artifacts beside its result (trained networks).
Compute = Callable[[Any], Any]
Plan = Callable[[list[Job]], list[list[Job]]]


class _OneAtATime:
    """A batch-taking compute made from a one-job compute (picklable when ``compute`` is)."""

    def __init__(self, compute: Compute) -> None:
        self.compute = compute

    def __call__(self, jobs: list[Job], cache: ResultCache) -> list[dict[str, Any]]:
        return [self.compute(job, cache=cache) for job in jobs]


def compute_and_store(jobs: list[Job], compute: Compute, cache_root: str | Path, wait: bool = True) -> list[dict[str, Any] | None]:
    """Compute one batch of jobs (``compute(jobs, cache=...)``) and write each job's result file;
    return each job's record.

    Only the jobs without a result whose lock this process takes are computed. A job whose lock
    another worker holds is waited for (``wait``: its record is read once the lock is free, or the
    job computed here if the holder died without a result) or, without ``wait``, left for later:
    its record is ``None``. Locks are taken in key order, so two waiting workers never deadlock.
    A module-level function, so it pickles for the process pool and SLURM.
    """
    from filelock import Timeout

    from ..device import get_device

    cache = ResultCache(cache_root)
    records: dict[Job, dict[str, Any] | None] = {job: cache.get(job) for job in jobs}
    held, todo = [], []
    try:
        for job in sorted((j for j in dict.fromkeys(jobs) if records[j] is None), key=Job.key):
            lock = cache.lock(job)
            try:
                lock.acquire(timeout=-1 if wait else 0)
            except Timeout:  # another worker computes it
                continue
            held.append(lock)
            records[job] = cache.get(job)  # finished by another worker while this one looked
            if records[job] is None:
                todo.append(job)
        if todo:
            t0, c0 = time.perf_counter(), time.process_time()
            metrics = compute(todo, cache=cache)
            # a batch's wall and CPU time, shared out
            seconds = (time.perf_counter() - t0) / len(todo)
            cpu_seconds = (time.process_time() - c0) / len(todo)
            for job, m in zip(todo, metrics, strict=True):
                records[job] = cache.save(job, m, seconds, device=str(get_device()), cpu_seconds=cpu_seconds)
    finally:
        for lock in held:
            lock.release()
    return [records[job] for job in jobs]


def run_jobs(
    jobs: Sequence[Job],
    compute: Compute,
    cache: ResultCache,
    *,
    executor: str = "inprocess",
    n_jobs: int = 1,
    progress: bool = True,
    slurm: dict[str, Any] | None = None,
    desc: str = "sweep",
    plan: Plan | None = None,
) -> dict[Job, dict[str, Any]]:
    """Make sure every job in ``jobs`` has a cached result; return ``{job: record}``.

    ``executor``: ``"inprocess"`` (one after the other), ``"process"`` (a local pool of
    ``n_jobs`` processes), ``"slurm"`` (a SLURM array through submitit; ``slurm`` holds its
    parameters, e.g. ``{"slurm_partition": "gpu", "gpus_per_node": 1, "timeout_min": 240}``) or
    ``"slurm-local"`` (submitit's local executor, which runs the same code path without a cluster;
    used by the tests). ``compute`` must be a module-level function for the last three.

    ``plan`` groups the missing jobs into batches; ``compute`` then receives a list of jobs and
    returns one metrics dict per job. Without a plan, ``compute`` receives one job at a time.
    """
    if executor not in EXECUTORS:
        raise ValueError(f"executor={executor!r} is not known; use one of {list(EXECUTORS)}")
    check_int(n_jobs, "n_jobs")
    unique = list(dict.fromkeys(jobs))
    done, missing = cache.status(unique)
    records = {job: cache.load(job) for job in done}
    if not missing:  # nothing to compute: no progress bar
        return {job: records[job] for job in unique}
    if executor == "slurm":
        check_slurm()
    bar = progress_bar(progress=progress, total=len(unique), initial=len(done), desc=desc, unit="job")
    if plan is None:
        units, compute = [[job] for job in missing], _OneAtATime(compute)
    else:
        units = plan(list(missing))
    try:
        if executor == "inprocess" or (executor == "process" and n_jobs == 1):
            for unit in units:
                bar.set_postfix_str(_label(unit))
                _collect(records, unit, compute_and_store(unit, compute, cache.root, False), bar)
        elif executor == "process":
            _run_pool(units, compute, cache, n_jobs, bar, records)
        else:
            _run_submitit(units, compute, cache, executor, dict(slurm or {}), bar, records)
        # the cells another worker held: wait for each (its result, or computed here if that worker
        # died), in the batches they were planned in
        for unit in units:
            held = [job for job in unit if records.get(job) is None]
            if held:
                bar.set_postfix_str("waiting for another worker: " + _label(held))
                _collect(records, held, compute_and_store(held, compute, cache.root, True), bar)
    finally:
        bar.close()
    return {job: records[job] for job in unique}


def _run_pool(units, compute, cache: ResultCache, n_jobs: int, bar, records: dict) -> None:
    """Compute ``units`` in a local pool of ``n_jobs`` processes (the machine's cores shared
    among them), collecting each result into ``records`` as it comes."""
    threads = max(1, (os.cpu_count() or 1) // n_jobs)
    with ProcessPoolExecutor(max_workers=n_jobs, mp_context=_pool_context(), initializer=_worker_init,
                             initargs=(threads, os.getpid())) as pool:
        futures = {pool.submit(compute_and_store, unit, compute, str(cache.root), False): unit for unit in units}
        for fut in as_completed(futures):
            _collect(records, futures[fut], fut.result(), bar)


def check_slurm() -> None:
    """The ``slurm`` executor submits through submitit, which needs SLURM's ``sbatch`` and
    ``srun``: refuse it in one line where they are not, before anything is computed."""
    try:
        import submitit  # noqa: F401
    except ImportError as err:  # an optional dependency
        raise RuntimeError("executor='slurm' needs submitit: pip install 'monosem[slurm]'") from err
    lacking = [tool for tool in ("sbatch", "srun") if shutil.which(tool) is None]
    if lacking:
        raise RuntimeError(f"executor='slurm' needs a SLURM cluster, but {' and '.join(lacking)} {'is' if len(lacking) == 1 else 'are'} not on PATH; "
                           "off a cluster use executor 'process' (or 'slurm-local' to try the SLURM code path)")


def _pool_context() -> multiprocessing.context.BaseContext:
    """The process pool's start method: ``spawn`` when the jobs compute on CUDA, the platform's
    default otherwise. CUDA cannot be used in a process forked after the parent initialised it
    (``max_stack`` queries the device's free memory before any job starts), so workers must start
    afresh; on a CPU the default (``fork`` on Linux) starts them faster."""
    from ..device import get_device

    return multiprocessing.get_context("spawn" if get_device().type == "cuda" else None)


def _worker_init(threads: int, parent: int) -> None:
    """Share the cores out between the pool's workers instead of oversubscribing them, and end the
    worker when its parent dies (a killed ``monosem run`` must not leave workers behind that
    finish their job and then wait forever): ``PR_SET_PDEATHSIG`` on Linux, and everywhere a
    watch thread that exits when the parent process is gone."""
    import signal
    import threading

    import torch

    torch.set_num_threads(threads)
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="monosem-parent-watch").start()


def _label(unit: list[Job]) -> str:
    return unit[0].label() if len(unit) == 1 else f"{len(unit)} x {unit[0].label()}"


def _collect(records: dict, unit: list[Job], results: list[dict[str, Any] | None], bar) -> None:
    """Keep a unit's records; a job another worker holds (``None``) is counted once it is read."""
    for job, rec in zip(unit, results, strict=True):
        records[job] = rec
    bar.update(sum(rec is not None for rec in results))


def _run_submitit(units, compute, cache, executor, params, bar, records) -> None:
    try:
        import submitit
    except ImportError as err:  # an optional dependency: pip install 'monosem[slurm]'
        raise ImportError("the SLURM executors need submitit: pip install 'monosem[slurm]'") from err
    if not units:
        return
    folder = Path(params.pop("folder", cache.root / "_submitit"))
    cluster = "local" if executor == "slurm-local" else "slurm"
    ex = submitit.AutoExecutor(folder=folder, cluster=cluster)
    if cluster == "local":
        params = {k: v for k, v in params.items() if not k.startswith("slurm_")}
    ex.update_parameters(**({"timeout_min": 60} | params))
    handles = ex.map_array(compute_and_store, list(units), [compute] * len(units), [str(cache.root)] * len(units),
                           [False] * len(units))
    for unit, handle in zip(units, handles):
        _collect(records, unit, handle.result(), bar)
