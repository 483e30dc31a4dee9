"""Results recorded at a larger profile and shipped with the package, for the pages that run smaller.

The book is built at the ``cpu`` profile; a page whose ``paper`` profile (or a long run) has been
computed once shows those numbers from small JSON files in ``monosem/recorded/``, next to its own
reduced-scale results, with the machine and the measured time. Files are plain JSON (nothing is
unpickled) written atomically; they live inside the package so that a Colab install finds them
too.

Every experiment's cells (the sweeps of Figures 2, 4, 6 and the regime map, Figure 1's readings
and study, the Theorem 1 and 2 experiments, ...) are recorded one file per cell,
``monosem/recorded/cells_<profile>/<method>/<key>.json``: the result-cache record (configuration,
metrics, wall time, threads, versions) plus the machine and the commit that exported it
(:func:`record_cells`, ``python -m monosem record FIGURE --profile P``). A long run is committed
cell by cell as it goes. :func:`load_recorded_cells` matches them to a sweep's jobs by their
configuration without the cache version, so every recorded number is recomputable from its key:
``python -m monosem run FIGURE --profile P --K .. --n .. --runs .. --methods ..``. Every cell is
stored under its typed key; ``scripts/migrate_recorded.py`` rewrote those recorded under the keys of
cache versions 1 and 2, and the results recorded as one named file before they were cells, as such
cells (a folder still holding one is reported, naming that command).
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from ..atomic import atomic_write_json
from .cache import Job, ResultCache, config_without_version, job_key, machine_description
from .specs import width_of

__all__ = [
    "machine_description",
    "same_instruction_set",
    "recorded_cells_dir",
    "record_cells",
    "load_recorded_cells",
    "restore_cells",
    "cell_times",
    "cell_times_frame",
    "cell_times_summary",
]

_NAME = re.compile(r"^[a-z0-9_]+$")


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name={name!r} must be lower-case letters, digits and underscores (a file stem)")
    return name


def same_instruction_set(record: dict[str, Any]) -> bool:
    """Whether a recorded payload or cell was computed on the CPU code path this process takes:
    the instruction set of PyTorch's CPU kernels (``ATEN_CPU_CAPABILITY`` chooses another) and
    MKL's (``MKL_CBWR``). A record that does not name its instruction set counts as another.

    Recomputing a recorded number uses one tolerance on the same path (run to run, the numbers
    are the record's) and a wider one elsewhere: a float32 training trajectory of thousands of
    updates carries the last bits of every matrix product, and MKL and ATen round differently
    from one instruction set to the next (the tests that recompute a record say how far).
    """
    machine = record.get("machine") or {}
    return (machine.get("cpu_capability") is not None
            and machine.get("cpu_capability") == torch.backends.cpu.get_cpu_capability()
            and machine.get("mkl_cbwr") == (os.environ.get("MKL_CBWR") or None))


def _plain(obj: Any) -> Any:
    """NumPy scalars and arrays, tuples and non-string keys made JSON-ready."""
    import numpy as np

    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def recorded_cells_dir(profile: str) -> Path:
    """``monosem/recorded/cells_<profile>/`` (whether or not it exists)."""
    return Path(str(resources.files("monosem") / "recorded")) / f"cells_{_check_name(profile)}"


def record_cells(jobs, cache: ResultCache, profile: str, *, root: str | os.PathLike | None = None,
                 replace: bool = False) -> tuple[int, int]:
    """Copy the cached results of ``jobs`` into the recorded cells of ``profile`` (atomically).
    A cell already recorded is left alone; where the cache holds another result for it (a
    recomputation, e.g. a network trained again, whose timings or last bits differ) the recorded
    one is kept with a warning naming it, unless ``replace``. Returns ``(recorded, missing)``: how
    many of ``jobs`` are now recorded and how many have no cached result yet."""
    base = Path(root) if root is not None else recorded_cells_dir(profile)
    found = _index(base)
    machine = None
    recorded = missing = 0
    for job in dict.fromkeys(jobs):
        if not cache.has(job):
            missing += 1
            continue
        record = cache.load(job)
        old = found.get(config_without_version(job.config()))
        if old is not None:  # recorded already
            kept, new = old.get("metrics", {}), record["metrics"]
            if kept != new and not replace:
                differ = sorted(k for k in kept.keys() | new.keys() if kept.get(k) != new.get(k))
                where = base / job.method / f"{job_key(old['config'])}.json"
                warnings.warn(f"recorded cell {where} differs from the cached result in {differ}; the recorded one "
                              "is kept (replace=True, or monosem record --replace, writes the cached one)", stacklevel=2)
            if kept == new or not replace:
                recorded += 1
                continue
        if record.get("machine") is None:  # a result cached before results named their machine
            if machine is None:
                machine = machine_description() | {"described": "when recorded, not when computed"}
            record = record | {"machine": machine}
        atomic_write_json(base / job.method / f"{job_key(record['config'])}.json", _plain(record | {"profile": profile}))
        recorded += 1
    return recorded, missing


#: the folders of recorded cells already reported for holding cells under a key of cache versions 1
#: and 2, in this process
_REPORTED: set[Path] = set()


def _index(base: Path) -> dict[str, dict[str, Any]]:
    """The recorded cells under ``base`` by their configuration without the cache version (an
    unreadable file is left out, with a warning naming it; a cell stored under a key of cache
    versions 1 and 2 too, with one warning per folder naming the command that migrates it)."""
    index: dict[str, dict[str, Any]] = {}
    flat = []
    for path in sorted(base.glob("*/*.json")) if base.exists() else ():
        try:
            with open(path, encoding="utf-8") as fh:
                record = json.load(fh)
            if "spec" not in record["config"]:  # a flat dictionary of settings: cache versions 1 and 2
                flat.append(path)
                continue
            index[config_without_version(record["config"])] = record
        except (OSError, ValueError, KeyError, TypeError) as err:
            warnings.warn(f"recorded cell {path} is unreadable ({err}); it is left out", stacklevel=3)
    if flat and base not in _REPORTED:
        _REPORTED.add(base)
        command = ("python scripts/migrate_recorded.py" if base.parent == recorded_cells_dir("cpu").parent
                   else f"python scripts/migrate_recorded.py --cache {base}")
        warnings.warn(f"{base} holds {len(flat)} recorded cells keyed before cache version 3 (e.g. {flat[0]}), which are not "
                      f"read: `{command}` rewrites them under their typed keys", stacklevel=3)
    return index


def load_recorded_cells(jobs, profile: str, *, root: str | os.PathLike | None = None) -> dict[Job, dict[str, Any]]:
    """``{job: record}`` for the jobs among ``jobs`` that the recorded cells of ``profile`` hold
    (matched on the configuration without the cache version; the others are left out)."""
    index = _index(Path(root) if root is not None else recorded_cells_dir(profile))
    out = {}
    for job in dict.fromkeys(jobs):
        record = index.get(config_without_version(job.config()))
        if record is not None:
            out[job] = record
    return out


def restore_cells(jobs, cache: ResultCache, profile: str, *, root: str | os.PathLike | None = None) -> int:
    """Write the recorded cells of ``jobs`` that the cache lacks back into the cache (their
    metrics and timing, under the current configuration and key), so that a fresh machine
    continues a long run instead of recomputing what is already recorded. Trained networks are
    not recorded: a gated cell whose source network is missing retrains it. Returns the number
    of cells restored."""
    restored = 0
    for job, record in load_recorded_cells(jobs, profile, root=root).items():
        if cache.has(job):
            continue
        timing = record.get("timing", {})
        cpu = timing.get("cpu_seconds")
        cache.save(job, record["metrics"], float(timing.get("seconds", 0.0)), device=str(timing.get("device", "")),
                   cpu_seconds=None if cpu is None else float(cpu))
        restored += 1
    return restored


def cell_times(records: dict) -> dict[str, Any]:
    """The recorded cells' wall times in one table: ``{"columns": [(K, n), ...], "rows":
    {label: {(K, n): seconds}}, "seconds", "cpu_seconds", "cells", "machines", "threads"}``
    (``threads``: how many cells ran on how many threads). A row is a
    method (and the network width where the sweep varies it); a cell resumed over several
    sittings counts all of them (its timing is the whole run's). Wall times are upper bounds
    of the computation: a cell that shared the machine with other work took longer."""
    rows: dict[str, dict[tuple[int, int], float]] = {}
    machines: dict[tuple, dict[str, Any]] = {}
    threads: Counter = Counter()
    seconds = cpu = 0.0
    for job, rec in records.items():
        t = rec.get("timing", {})
        threads[t.get("threads")] += 1
        s = float(t.get("seconds", float("nan")))
        width = width_of(job)
        row = rows.setdefault(job.method + (f" w{width}" if width else ""), {})
        row[(job.K, job.n)] = row.get((job.K, job.n), 0.0) + s
        seconds += s
        cpu += float(t.get("cpu_seconds", s))
        m = rec.get("machine", {})
        machines[(m.get("platform"), m.get("cpu_count"), m.get("accelerator"))] = m
    columns = sorted({c for r in rows.values() for c in r})
    return {"columns": columns, "rows": dict(sorted(rows.items())), "seconds": seconds, "cpu_seconds": cpu,
            "cells": len(records), "machines": list(machines.values()), "threads": dict(threads)}


def cell_times_frame(records: dict) -> pd.DataFrame:
    """:func:`cell_times` as a table: wall minutes, summed over the runs, one row per method (and
    network width), one column per (K, n); empty where a row has no cell at that size."""
    t = cell_times(records)
    cols = t["columns"]
    return pd.DataFrame([[row[c] / 60 if c in row else float("nan") for c in cols] for row in t["rows"].values()],
                        index=pd.Index(list(t["rows"]), name="method"), dtype=float,
                        columns=pd.MultiIndex.from_tuples([("wall minutes, all runs", K, n) for K, n in cols], names=[None, "K", "n"]))


def cell_times_summary(records: dict) -> str:
    """The machine(s) and threads per cell of the recorded cells, and their total wall and CPU
    hours, in a few lines."""
    if not records:
        return "no recorded cells yet"
    t = cell_times(records)
    lines = [f"machine: {m.get('cpu_count')} cores, accelerator {m.get('accelerator') or 'none'}, torch {m.get('torch')}"
             for m in t["machines"]]
    lines.append("threads per cell: " + ", ".join(f"{'not recorded' if k is None else k} ({v} cells)"
                                                  for k, v in sorted(t["threads"].items(), key=lambda kv: str(kv[0]))))
    lines.append(f"total: {t['seconds'] / 3600:.1f} h wall ({t['cpu_seconds'] / 3600:.1f} h CPU) over {t['cells']} cells")
    return "\n".join(lines)
