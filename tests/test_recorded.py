"""Recorded results: cells through JSON, each under its typed key."""

from __future__ import annotations

import json
import numpy as np
import pytest


def test_recorded_cells_are_plain_json_with_the_machine(tmp_path):
    """A recorded cell is the cache's record (NumPy values made plain) with the profile and the
    machine; a bad profile name is refused."""
    from monosem.experiments.cache import ResultCache
    from monosem.experiments.recorded import load_recorded_cells, record_cells, recorded_cells_dir
    from _toy_jobs import toy_job

    job = toy_job()
    cache = ResultCache(tmp_path / "cache")
    cache.save(job, {"test_mse": np.float64(0.93), "counts": np.array([1, 2, 3]).tolist()}, 12.5)
    assert record_cells([job], cache, "smoke", root=tmp_path / "rec") == (1, 0)
    (path,) = (tmp_path / "rec").rglob("*.json")
    payload = json.loads(path.read_text())
    assert payload["profile"] == "smoke" and payload["metrics"]["test_mse"] == 0.93 and payload["timing"]["seconds"] == 12.5
    assert {"cpu_count", "torch_threads", "accelerator", "git_commit"} <= set(payload["machine"])
    assert load_recorded_cells([job], "smoke", root=tmp_path / "rec")[job]["metrics"] == payload["metrics"]
    assert not list(tmp_path.rglob(".*.tmp"))
    assert recorded_cells_dir("demo").name == "cells_demo"
    with pytest.raises(ValueError, match="name"):
        recorded_cells_dir("../escape")


def test_a_recorded_cell_names_the_machine_that_computed_it(tmp_path, monkeypatch):
    """The machine and commit are written when the cell is computed (a GPU machine's cell
    recorded later on a CPU keeps its accelerator); a result cached before results named their
    machine is recorded with the recorder's, marked as described when recorded."""
    import json as _json

    from monosem.experiments import cache as cache_mod, recorded as rec_mod
    from monosem.experiments.cache import ResultCache
    from monosem.experiments.recorded import record_cells
    from _toy_jobs import toy_job

    cache = ResultCache(tmp_path / "cache")
    gpu = {"cpu_count": 16, "accelerator": "a GPU", "git_commit": "abc1234", "torch_threads": 16}
    monkeypatch.setattr(cache_mod, "machine_description", lambda: dict(gpu))
    job = toy_job()
    cache.save(job, {"test_mse": 0.5}, 1.0)
    here = {"cpu_count": 2, "accelerator": None, "git_commit": "def5678", "torch_threads": 1}
    monkeypatch.setattr(rec_mod, "machine_description", lambda: dict(here))
    record_cells([job], cache, "smoke", root=tmp_path / "rec")
    (path,) = (tmp_path / "rec").rglob("*.json")
    assert _json.loads(path.read_text())["machine"] == gpu
    # an older cached result, without its machine
    old = toy_job(run=1)
    cache.save(old, {"test_mse": 0.5}, 1.0)
    stored = cache.path(old)
    stored.write_text(_json.dumps({k: v for k, v in _json.loads(stored.read_text()).items() if k != "machine"}))
    record_cells([old], cache, "smoke", root=tmp_path / "rec2")
    (path,) = (tmp_path / "rec2").rglob("*.json")
    assert _json.loads(path.read_text())["machine"] == here | {"described": "when recorded, not when computed"}


def test_a_recorded_cell_is_kept_when_the_cache_holds_another_result(tmp_path):
    """A recomputed cell (another run's timings or last bits) does not overwrite what is
    recorded: the recorded result is kept with a warning naming the cell and what differs, and
    ``replace=True`` writes the cached one."""
    from monosem.experiments.cache import ResultCache
    from monosem.experiments.recorded import load_recorded_cells, record_cells
    from _toy_jobs import toy_job

    job, root = toy_job(), tmp_path / "rec"
    cache = ResultCache(tmp_path / "cache")
    cache.save(job, {"test_mse": 0.5, "steps_per_second": 100.0}, 1.0)
    assert record_cells([job], cache, "smoke", root=root) == (1, 0)
    cache.save(job, {"test_mse": 0.5, "steps_per_second": 120.0}, 2.0)
    with pytest.warns(UserWarning, match=r"recorded cell .*\.json differs .*'steps_per_second'.*kept"):
        assert record_cells([job], cache, "smoke", root=root) == (1, 0)
    assert load_recorded_cells([job], "smoke", root=root)[job]["metrics"]["steps_per_second"] == 100.0
    assert record_cells([job], cache, "smoke", root=root, replace=True) == (1, 0)
    assert load_recorded_cells([job], "smoke", root=root)[job]["metrics"]["steps_per_second"] == 120.0
    assert len(list(root.rglob("*.json"))) == 1


#: names that only the flat keys of cache versions 1 and 2 used
_FLAT_NAMES = {"params", "lr_final", "rel_improvement", "solver_max_iter", "eigenpro"}


def _names(value) -> set:
    """Every dictionary key in a JSON value, at any depth."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _names(v)}
    if isinstance(value, list):
        return {k for v in value for k in _names(v)}
    return set()


def test_every_recorded_file_is_a_cell_under_its_typed_key():
    """Every JSON file under monosem/recorded/ is a cell ``cells_<profile>/<method>/<key>.json``
    whose key (its name and its ``key``) hashes its stored configuration, a typed one: its data
    and spec serialized whole, none of the flat keys' names (``scripts/migrate_recorded.py``
    rewrote those)."""
    from pathlib import Path

    import monosem
    from monosem.experiments.cache import job_key

    root = Path(monosem.__file__).parent / "recorded"
    files = sorted(root.rglob("*.json"))
    assert len(files) > 500
    for path in files:
        rel = path.relative_to(root)
        assert len(rel.parts) == 3 and rel.parts[0].startswith("cells_"), f"{rel} is not a cell file"
        record = json.loads(path.read_text())
        config = record["config"]
        assert path.stem == record["key"] == job_key(config), rel
        assert config["method"] == rel.parts[1] and {"data", "spec"} <= set(config), rel
        assert not _names(config) & _FLAT_NAMES, f"{rel} holds {_names(config) & _FLAT_NAMES}"


def _migration_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "migrate_recorded.py"
    spec = importlib.util.spec_from_file_location("migrate_recorded", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_cache_keyed_before_the_typed_specs_is_named_and_migrated(tmp_path, capsys):
    """A cache whose results are stored under the flat keys of cache version 2 finds none of
    them, and says so once, naming the migration command; that command rewrites each under its
    typed key (the result and its trained network, the metrics and timing untouched), refuses a
    file it cannot map, and changes nothing when run again."""
    import torch

    from monosem.atomic import atomic_write_json
    from monosem.experiments.cache import ResultCache, job_key
    from monosem.experiments.sweeps import sweep

    m = _migration_script()
    job = sweep("fig2", "smoke", methods=["mlp-relu"])[0]
    old = m.legacy_config(job)
    root = tmp_path / "cache"
    record = {"config": old, "key": job_key(old), "metrics": {"test_mse": 0.5}, "timing": {"seconds": 3.0},
              "machine": {"git_commit": "abc1234"}}
    atomic_write_json(root / job.method / f"{job_key(old)}.json", record)
    (root / "models").mkdir()
    torch.save({"key": job_key(old), "W": torch.zeros(2)}, root / "models" / f"{job_key(old)}.pt")
    with pytest.warns(UserWarning, match=r"keyed before cache version 3 .*migrate_recorded.py --cache"):
        assert not ResultCache(root).has(job)
    stray = old | {"method": "no-such-method"}
    atomic_write_json(root / "no-such-method" / f"{job_key(stray)}.json", record | {"config": stray})
    assert m.main(["--cache", str(root)]) == 1
    out, err = capsys.readouterr()
    assert "1 file(s) rewritten" in out and err.startswith("refused ") and "no-such-method" in err
    (root / "no-such-method" / f"{job_key(stray)}.json").unlink()
    got = ResultCache(root).load(job)
    assert got["config"] == job.config() and got["key"] == job.key()
    assert {k: got[k] for k in ("metrics", "timing", "machine")} == {k: record[k] for k in ("metrics", "timing", "machine")}
    assert torch.load(root / "models" / f"{job.key()}.pt", weights_only=True)["key"] == job.key()
    assert sorted(p.name for p in root.rglob("*.*")) == sorted([f"{job.key()}.json", f"{job.key()}.pt"])
    assert m.main(["--cache", str(root)]) == 0 and "0 file(s) rewritten" in capsys.readouterr().out
