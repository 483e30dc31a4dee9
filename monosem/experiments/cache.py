"""Jobs and their on-disk result cache.

A sweep is a list of :class:`Job` s, one per cell of a figure's grid (K x n x run x method). Each
job is keyed by a hash of its *full* configuration, so changing any field (a profile size, a
learning rate, the package's cache version) gives a new key and never reuses a stale result. The
figure a job was declared for is not part of its configuration: the same MLP cell of Figures 2, 4
and 6 is one job, computed once.
Results are small JSON files (config, metrics, timings, versions) written atomically: a file is
either absent or complete, so a sweep interrupted at any point resumes where it stopped and a
finished cell is never recomputed. Nothing is ever unpickled.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..atomic import atomic_write_json, quarantine

__all__ = ["CACHE_VERSION", "EARLIER_CPU_SECONDS", "EARLIER_SECONDS", "Job", "ResultCache", "config_without_version", "default_cache_dir", "atomic_write_json"]

#: Bump when a change to the code makes old cached results wrong. 2: the key no longer holds the
#: profile's name (a cell computed for two profiles with the same settings is one cell), and it
#: holds the working precision and every training and solver setting the computation reads.
CACHE_VERSION = 2
#: metric names by which a computation resumed from a checkpoint reports the wall and CPU time of
#: its earlier sittings; :meth:`ResultCache.save` adds them to the cell's timing
EARLIER_SECONDS, EARLIER_CPU_SECONDS = "_earlier_sittings_seconds", "_earlier_sittings_cpu_seconds"


def default_cache_dir() -> Path:
    """``$MONOSEM_CACHE`` if set, else ``results/cache`` under the current directory."""
    return Path(os.environ.get("MONOSEM_CACHE", "results/cache"))


def _freeze(value: Any) -> Any:
    """A hashable form: dicts become sorted tuples of pairs, lists become tuples."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _canonical(value: Any) -> Any:
    """JSON-friendly form: tuples become lists (json.dumps sorts the keys)."""
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Job:
    """One cell of a sweep: a method evaluated at (K, n, run), declared by a profile.

    ``params`` holds every other setting the computation depends on (widths, steps, learning
    rates, test size, precision, ...), as a tuple of ``(name, value)`` pairs so that the job is
    hashable. ``profile`` only says which profile declared the job: it is not part of the key,
    so the same cell declared by two profiles (or by the regime map and a profile) is computed
    once.
    """

    method: str
    K: int
    n: int
    run: int
    profile: str
    params: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    @classmethod
    def make(cls, method: str, K: int, n: int, run: int, profile: str, **params: Any) -> "Job":
        return cls(method, int(K), int(n), int(run), profile, _freeze(params))

    @property
    def param_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def config(self) -> dict[str, Any]:
        """The full configuration that determines this job's result."""
        return {
            "cache_version": CACHE_VERSION,
            "method": self.method,
            "K": self.K,
            "n": self.n,
            "run": self.run,
            "params": _canonical(self.param_dict),
        }

    def key(self) -> str:
        """A stable 16-hex-digit hash of :meth:`config` (independent of dict order and Python run)."""
        blob = json.dumps(self.config(), sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def label(self) -> str:
        return f"{self.method} K={self.K} n={self.n} run={self.run}"


#: the scientific dependencies a record names the version of, besides torch and numpy (read from
#: the installed distributions' metadata, without importing them)
_RECORDED_DISTRIBUTIONS = ("scipy", "scikit-learn", "pandas", "sympy", "matplotlib")


@functools.lru_cache(maxsize=1)
def _distribution_versions() -> tuple[tuple[str, str | None], ...]:
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for name in _RECORDED_DISTRIBUTIONS:
        try:
            found.append((name, version(name)))
        except PackageNotFoundError:
            found.append((name, None))
    return tuple(found)


def _versions() -> dict[str, str | None]:
    """The versions a record names: the package, torch, numpy, every other scientific
    dependency, Python. Not part of any cache key."""
    import numpy
    import torch

    from .. import __version__

    return {"monosem": __version__, "torch": torch.__version__, "numpy": numpy.__version__,
            **dict(_distribution_versions()), "python": platform.python_version()}


def _threads() -> int:
    import torch

    return int(torch.get_num_threads())


def config_without_version(config: dict[str, Any]) -> str:
    """A job configuration as canonical JSON without its cache version: what a recorded cell is
    matched on, so that recorded results outlive a bump of :data:`CACHE_VERSION` that does not
    change what the cell computes."""
    plain = {k: v for k, v in config.items() if k != "cache_version"}
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), allow_nan=False)


class ResultCache:
    """A folder of ``<method>/<key>.json`` result files."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()

    def path(self, job: Job) -> Path:
        return self.root / job.method / f"{job.key()}.json"

    def has(self, job: Job) -> bool:
        """Whether a result file exists for ``job`` (readable or not: see :meth:`status`)."""
        return self.path(job).exists()

    def load(self, job: Job) -> dict[str, Any]:
        """The record of ``job``. A file that is unreadable, is not a record or holds another job
        is moved aside (``*.corrupt``, with a warning naming it) and ``FileNotFoundError`` raised,
        so the caller recomputes that one cell."""
        path = self.path(job)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        try:
            record = json.loads(text)
            ok = isinstance(record, dict) and isinstance(record.get("metrics"), dict)
        except ValueError as err:
            record, ok, why = None, False, f"not JSON: {err}"
        else:
            why = "not a result record"
        if ok and record.get("config") != job.config():
            ok, why = False, f"it holds another job than {job.label()}"
        if not ok:
            quarantine(path, why)
            raise FileNotFoundError(f"no usable result for {job.label()} (moved aside: {why})")
        return record

    def save(self, job: Job, metrics: dict[str, Any], seconds: float, device: str = "",
             cpu_seconds: float | None = None) -> dict[str, Any]:
        """Write a job's result: ``seconds`` of wall time and, when measured, ``cpu_seconds`` of
        the process's CPU time (all its threads); unlike the wall time, the CPU time does not
        count a paused process or one waiting for a core that another job holds."""
        # a computation resumed from a checkpoint reports its earlier sittings' time in its
        # metrics: the cell's timing is the whole run's, and says over how many sittings
        metrics = dict(metrics)
        earlier, earlier_cpu = float(metrics.pop(EARLIER_SECONDS, 0.0)), float(metrics.pop(EARLIER_CPU_SECONDS, 0.0))
        timing = {"seconds": seconds + earlier, "device": device, "threads": _threads(), "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        if cpu_seconds is not None:
            timing["cpu_seconds"] = cpu_seconds + earlier_cpu
        if earlier > 0:
            timing["earlier_sittings_seconds"] = earlier
        record = {
            "config": job.config(),
            "key": job.key(),
            "metrics": metrics,
            "timing": timing,
            "versions": _versions(),
        }
        atomic_write_json(self.path(job), record)
        return record

    def status(self, jobs: Iterable[Job]) -> tuple[list[Job], list[Job]]:
        """``(done, missing)`` among ``jobs``; a damaged result file is moved aside (with a
        warning) and its job counted as missing. :attr:`damaged` lists those of the last call."""
        done, missing = [], []
        self.damaged: list[Job] = []
        for job in jobs:
            if self.has(job):
                try:
                    self.load(job)
                except FileNotFoundError:
                    self.damaged.append(job)
                    missing.append(job)
                    continue
                done.append(job)
            else:
                missing.append(job)
        return done, missing
