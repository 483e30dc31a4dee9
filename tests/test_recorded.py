"""Recorded results: cells through JSON, and the named files recorded before them."""

from __future__ import annotations

import json
import numpy as np
import pytest


def test_recorded_cells_are_plain_json_with_the_machine(tmp_path):
    """A recorded cell is the cache's record (NumPy values made plain) with the profile and the
    machine; a named file recorded before the cells is read by name, and a bad name is refused."""
    from monosem.experiments.cache import ResultCache
    from monosem.experiments.recorded import load_recorded, load_recorded_cells, record_cells, recorded_path
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
    assert recorded_path("demo_page").name == "demo_page.json"
    assert load_recorded("no_such_page_recorded") is None
    with pytest.raises(ValueError, match="name"):
        recorded_path("../escape")


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
