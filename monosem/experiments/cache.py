"""Jobs and their on-disk result cache.

A sweep is a list of :class:`Job` s, one per cell of a figure's grid (K x n x run x method). A job
is its method, its data (a frozen data spec, :func:`~monosem.experiments.specs.data_config`) and its method's typed spec
(:mod:`.specs`); it is keyed by a hash of these serialized whole, so changing any field (a profile
size, a learning rate, the package's cache version) gives a new key and never reuses a stale
result. The figure and profile a job was declared for are not part of its key: the same MLP cell of
Figures 2, 4 and 6 is one job, computed once.
Results are small JSON files (config, metrics, timings, versions) written atomically: a file is
either absent or complete, so a sweep interrupted at any point resumes where it stopped and a
finished cell is never recomputed. A file is trusted only after a schema check
(:func:`check_record`): one that fails it is moved aside and its cell counts as missing. A result
stored under a key of cache versions 1 and 2 (spelled before the specs were typed) is not read: a
cache holding one says so once, naming ``python scripts/migrate_recorded.py --cache PATH``, which
rewrites it under its typed key. Nothing is ever unpickled.

Workers that share a cache split its cells: a worker computes a cell only while it holds the
cell's lock (``<method>/<key>.lock``, an advisory ``flock`` through :mod:`filelock`, which the
operating system drops when its holder dies, so a killed worker's cells are taken over).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import numbers
import os
import platform
import re
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from filelock import FileLock

from ..atomic import atomic_write_json, quarantine
from .specs import data_config, spec_config

__all__ = ["CACHE_VERSION", "EARLIER_CPU_SECONDS", "EARLIER_SECONDS", "ERROR_METRICS", "Job", "ResultCache", "check_record",
           "config_without_version", "default_cache_dir", "atomic_write_json", "job_key", "machine_description", "unmigrated",
           "warn_unmigrated"]

#: Bump when a change to the code makes old cached results wrong. 3: the key is the cell's typed
#: specs serialized whole (:mod:`.specs`); ``scripts/migrate_recorded.py`` rewrites a result of versions 1 and
#: 2 (a flat dictionary of settings) under its typed key.
CACHE_VERSION = 3
#: metric names by which a computation resumed from a checkpoint reports the wall and CPU time of
#: its earlier sittings; :meth:`ResultCache.save` adds them to the cell's timing
EARLIER_SECONDS, EARLIER_CPU_SECONDS = "_earlier_sittings_seconds", "_earlier_sittings_cpu_seconds"


def default_cache_dir() -> Path:
    """``$MONOSEM_CACHE`` if set, else ``results/cache`` under the current directory. An empty
    ``$MONOSEM_CACHE`` is an error (it would cache into the current directory)."""
    root = os.environ.get("MONOSEM_CACHE")
    if root is None:
        return Path("results/cache")
    if not root.strip():
        raise ValueError("MONOSEM_CACHE is set but empty; name a cache folder or unset it (default: results/cache)")
    return Path(root)


#: a record's error metrics: each, where present, a finite number >= 0 (``test_mse`` may instead
#: be a table of them, a dict, in a question's own cell; ``test_mse_by_iteration`` is a list of them)
ERROR_METRICS = ("test_mse", "test_median_se", "train_mse", "test_mse_final")
_ERROR_LISTS = ("test_mse_by_iteration",)


def _is_error(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _error_table(value: Any) -> bool:
    """A dict whose every value is an error or such a dict."""
    return isinstance(value, dict) and all(_is_error(v) or _error_table(v) for v in value.values())


def check_record(record: Any, config: dict[str, Any]) -> str | None:
    """Why ``record`` is not a result of the job whose configuration is ``config`` (``None``
    when it is one): it must be a dict holding that configuration, a ``metrics`` dict whose
    error metrics (:data:`ERROR_METRICS`) are finite numbers >= 0, and a ``timing`` dict if any."""
    if not isinstance(record, dict) or not isinstance(record.get("metrics"), dict):
        return "not a result record"
    if record.get("config") != config:
        return "it holds another job"
    if not isinstance(record.get("timing", {}), dict):
        return f"timing is {type(record['timing']).__name__}, not a dict"
    metrics = record["metrics"]
    for name in ERROR_METRICS:
        value = metrics.get(name, 0.0)
        if not (_is_error(value) or (name == "test_mse" and _error_table(value) and value)):
            return f"{name}={value!r} is not a finite number >= 0"
    for name in _ERROR_LISTS:
        value = metrics.get(name, [])
        if not (isinstance(value, list) and all(_is_error(v) for v in value)):
            return f"{name}={value!r} is not a list of finite numbers >= 0"
    return None


def job_key(config: dict[str, Any]) -> str:
    """A stable 16-hex-digit hash of a job's configuration (independent of dict order and of the
    Python process)."""
    blob = json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Job:
    """One cell of a sweep: ``method`` on the data ``data`` with the method's settings ``spec``
    (a frozen dataclass of :mod:`.specs` or a registered method's own; ``None`` for a method that
    reads only the data). ``data`` is a :class:`~.specs.DataSpec` (the mixed-link model of
    Section 3) or a question's own data spec: a frozen dataclass with the fields ``K``, ``n`` and
    ``run`` (:func:`~.specs.data_config`). ``profile`` only says which profile declared the job: it
    is not part of the key, so the same cell declared by two profiles (or by the regime map and a
    profile) is computed once."""

    method: str
    data: Any
    spec: Any = None
    profile: str = ""

    def __post_init__(self) -> None:
        data_config(self.data)  # a frozen dataclass with K, n and run, or a TypeError naming what is wrong
        if self.spec is not None and (not dataclasses.is_dataclass(self.spec) or isinstance(self.spec, type)):
            raise TypeError(f"Job.spec must be a frozen dataclass instance or None, got {type(self.spec).__name__}")
        try:
            hash(self.spec)
        except TypeError:
            raise TypeError(f"Job.spec must be a frozen dataclass, got {type(self.spec).__name__}") from None

    @property
    def K(self) -> int:
        return self.data.K

    @property
    def n(self) -> int:
        return self.data.n

    @property
    def run(self) -> int:
        return self.data.run

    def on(self, **data: Any) -> "Job":
        """The same method and settings on other data (``job.on(n=...)``)."""
        return dataclasses.replace(self, data=dataclasses.replace(self.data, **data))

    def config(self) -> dict[str, Any]:
        """The full configuration that determines this job's result: its specs, serialized whole."""
        return {"cache_version": CACHE_VERSION, "method": self.method, "data": data_config(self.data),
                "spec": spec_config(self.spec)}

    def key(self) -> str:
        """A stable 16-hex-digit hash of :meth:`config`."""
        return job_key(self.config())

    def label(self) -> str:
        """The cell in words: its method and grid point, and its spec's own ``label`` where it
        has one (what tells apart the cells of one method at one grid point)."""
        extra = getattr(self.spec, "label", None)
        return f"{self.method} K={self.K} n={self.n} run={self.run}" + (f" ({extra})" if isinstance(extra, str) else "")


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


def machine_description() -> dict[str, Any]:
    """What ran it: CPU cores and the vector instructions PyTorch's CPU kernels use (float32
    training on another instruction set rounds differently, and a long run's numbers move in the
    third digit), torch threads, the accelerator if any, versions, the git commit of the code.
    :meth:`ResultCache.save` writes it into every result, so that a cell names the machine and
    the commit that computed it wherever it is recorded later."""
    import torch

    info: dict[str, Any] = {
        "cpu_count": os.cpu_count(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_threads": torch.get_num_threads(),
        "platform": platform.platform(),
        **_versions(),
        "accelerator": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }
    if os.environ.get("MKL_CBWR"):  # MKL's code path pinned (conditional numerical reproducibility)
        info["mkl_cbwr"] = os.environ["MKL_CBWR"]
    info["git_commit"] = _git_commit()
    return info


@functools.cache
def _git_commit() -> str | None:
    """The short commit of the checkout the package runs from (``None`` outside a git checkout,
    e.g. an installed wheel). Asked once per process: a long worker's code does not change under
    it (it imported its modules when it started)."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).resolve().parent,
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _threads() -> int:
    import torch

    return int(torch.get_num_threads())


def config_without_version(config: dict[str, Any]) -> str:
    """A job configuration as canonical JSON without its cache version: what a recorded cell is
    matched on, so that recorded results outlive a bump of :data:`CACHE_VERSION` that does not
    change what the cell computes."""
    plain = {k: v for k, v in config.items() if k != "cache_version"}
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), allow_nan=False)


#: a result file's opening when its configuration is spelled the flat way of cache versions 1 and 2
#: (its first keys ``K`` and ``cache_version``; a typed one's first is ``cache_version``), as
#: :func:`atomic_write_json` writes it
_FLAT_CONFIG = re.compile(rb'^\{\s*"config":\s*\{\s*"K":\s*\d+,\s*"cache_version":\s*[12],')
#: the cache folders already looked through for such files, in this process
_LOOKED: set[Path] = set()


def unmigrated(root: str | os.PathLike) -> list[Path]:
    """The result files under ``root`` (``<method>/<key>.json``) stored under a key of cache
    versions 1 and 2, which nothing reads (read from each file's first bytes only)."""
    found = []
    for path in sorted(Path(root).glob("*/*.json")):
        try:
            with open(path, "rb") as fh:
                if _FLAT_CONFIG.match(fh.read(128)):
                    found.append(path)
        except OSError:
            continue
    return found


def warn_unmigrated(root: str | os.PathLike) -> None:
    """Warn, once per folder and process, when ``root`` holds results stored under a key of cache
    versions 1 and 2, naming the command that rewrites them under their typed keys."""
    root = Path(root)
    if root in _LOOKED:
        return
    _LOOKED.add(root)
    old = unmigrated(root) if root.is_dir() else []
    if old:
        warnings.warn(f"{root} holds {len(old)} results keyed before cache version 3 (e.g. {old[0]}), which are not read: "
                      f"`python scripts/migrate_recorded.py --cache {root}` rewrites them under their typed keys", stacklevel=3)


class ResultCache:
    """A folder of ``<method>/<key>.json`` result files."""

    def __init__(self, root: str | Path | None = None) -> None:
        if isinstance(root, str) and not root.strip():
            raise ValueError("cache root is empty; name a cache folder (None: $MONOSEM_CACHE, else results/cache)")
        self.root = Path(root) if root is not None else default_cache_dir()
        #: the jobs whose damaged result file the last :meth:`status` moved aside
        self.damaged: list[Job] = []

    def path(self, job: Job) -> Path:
        """Where ``job``'s result is written."""
        return self.root / job.method / f"{job.key()}.json"

    def has(self, job: Job) -> bool:
        """Whether a result file exists for ``job`` (readable or not: see :meth:`status`)."""
        if self.path(job).exists():
            return True
        warn_unmigrated(self.root)
        return False

    def load(self, job: Job) -> dict[str, Any]:
        """The record of ``job``. A file that is undecodable, is not JSON or fails the schema
        check (:func:`check_record`: another job, wrong types, an error that is negative or not
        finite) is moved aside (``*.corrupt``, with a warning naming it) and ``FileNotFoundError``
        raised: the cell counts as missing, and a run recomputes that one cell."""
        if not self.has(job):
            raise FileNotFoundError(f"no result for {job.label()} in {self.root}")
        path, config = self.path(job), job.config()
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            record = json.loads(data.decode("utf-8"))
        except ValueError as err:  # UnicodeDecodeError and JSONDecodeError alike
            record, why = None, f"not JSON: {err}"
        else:
            why = check_record(record, config)
            if why == "it holds another job":
                why += f" than {job.label()}"
        if why is not None:
            quarantine(path, why, then="its cell counts as missing (a run recomputes it)")
            raise FileNotFoundError(f"no usable result for {job.label()} (moved aside: {why})")
        return record

    def get(self, job: Job) -> dict[str, Any] | None:
        """The record of ``job``, or ``None`` when it has none (a damaged file is moved aside, as
        by :meth:`load`)."""
        try:
            return self.load(job) if self.has(job) else None
        except FileNotFoundError:
            return None

    def lock(self, job: Job) -> FileLock:
        """The lock of ``job``'s cell (``<method>/<key>.lock``): a worker computes the cell only
        while it holds it. An advisory ``flock``: released when its holder exits or is killed."""
        path = self.root / job.method / f"{job.key()}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(path))

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
            "machine": machine_description(),
        }
        # what the cache holds passes its own check: a computation that gave no usable error is
        # refused here rather than written and then moved aside as damage on every reading
        why = check_record(record, record["config"])
        if why is not None:
            raise ValueError(f"the result of {job.label()} is not cached: {why}")
        atomic_write_json(self.path(job), record)
        return record

    def status(self, jobs: Iterable[Job]) -> tuple[list[Job], list[Job]]:
        """``(done, missing)`` among ``jobs``; a damaged result file is moved aside (with a
        warning) and its job counted as missing. :attr:`damaged` lists those of the last call."""
        done, missing = [], []
        self.damaged = []
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
