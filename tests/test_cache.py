"""The result cache: keys, atomic files, damaged files."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import pytest
from monosem.experiments import cache as cache_mod
from monosem.experiments.cache import Job, ResultCache, atomic_write_json
from _toy_jobs import ToySpec, _jobs, toy_job


def test_keys_are_stable_and_name_every_setting():
    a, b = toy_job("mlp-relu", 10, 1000, spec=ToySpec(64, 0.01)), toy_job("mlp-relu", 10, 1000, spec=ToySpec(64, 0.01))
    assert a == b and a.key() == b.key() and len(a.key()) == 16
    # a fixed configuration has a fixed key across Python processes (no hash randomization)
    assert toy_job("bayes", spec=None).key() == toy_job("bayes", spec=None).key()
    # the key is the typed specs serialized whole: every field named, the spec's type too
    config = a.config()
    assert config["data"] == dataclasses.asdict(a.data) and config["spec"] == {"kind": "ToySpec", "width": 64, "lr": 0.01}


def test_keys_are_sensitive_to_every_field():
    base = toy_job("mlp-relu", 10, 1000, spec=ToySpec(64, 0.01))
    variants = [
        dataclasses.replace(base, method="mlp-gelu"),
        base.on(K=2),
        base.on(n=2000),
        base.on(run=1),
        base.on(n_test=9),
        base.on(gamma=0.5),
        base.on(zipf=0.0),
        base.on(dtype="float64"),
        dataclasses.replace(base, spec=ToySpec(65, 0.01)),
        dataclasses.replace(base, spec=ToySpec(64, 0.02)),
        dataclasses.replace(base, spec=None),
    ]
    keys = {base.key()} | {v.key() for v in variants}
    assert len(keys) == len(variants) + 1
    # the declaring profile is a label, not an input of the computation: one cell, one key
    assert dataclasses.replace(base, profile="long").key() == base.key()


def test_a_job_is_typed():
    with pytest.raises(TypeError, match="frozen dataclass"):
        Job("toy", {"K": 1}, None)
    with pytest.raises(TypeError, match="frozen dataclass"):
        Job("toy", toy_job().data, {"width": 8})


def test_a_question_brings_its_own_data_kind_and_the_key_names_it():
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Population:
        K: int
        n: int
        run: int
        R: float

    @dataclasses.dataclass(frozen=True)
    class NoRun:
        K: int
        n: int

    job = Job("toy", Population(3, 0, 0, 2.0))
    assert job.config()["data"] == {"kind": "Population", "K": 3, "n": 0, "run": 0, "R": 2.0}
    assert (job.K, job.n, job.run) == (3, 0, 0) and job.key() != Job("toy", Population(3, 0, 0, 4.0)).key()
    # the mixed-link data is named by its fields alone: the keys of every earlier cell hold
    assert "kind" not in toy_job().config()["data"]
    with pytest.raises(TypeError, match=r"lacks \['run'\]"):
        Job("toy", NoRun(3, 0))


def test_cache_version_is_part_of_the_key(monkeypatch):
    job = _jobs()[0]
    k1 = job.key()
    monkeypatch.setattr(cache_mod, "CACHE_VERSION", cache_mod.CACHE_VERSION + 1)
    assert job.key() != k1


def test_atomic_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    atomic_write_json(target, {"a": 1})

    def broken_dump(obj, fh, **kw):
        fh.write('{"half": ')
        raise RuntimeError("disk full")

    monkeypatch.setattr(json, "dump", broken_dump)
    with pytest.raises(RuntimeError):
        atomic_write_json(target, {"a": 2})
    monkeypatch.undo()
    assert json.loads(target.read_text()) == {"a": 1}  # the old complete file, untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # no temporary left behind


def test_cache_refuses_a_file_of_another_job(tmp_path):
    c = ResultCache(tmp_path)
    a, b = _jobs()[:2]
    c.save(a, {"x": 1}, 0.1)
    os.replace(c.path(a), c.path(b))
    with pytest.warns(RuntimeWarning, match="another job"), pytest.raises(FileNotFoundError, match="moved aside"):
        c.load(b)
    # moved aside: the cell now counts as missing and is recomputed
    assert not c.has(b) and c.path(b).with_name(c.path(b).name + ".corrupt").exists()


@pytest.mark.slow
def test_damaged_json_model_and_checkpoint_cost_one_cell_each(tmp_path, monkeypatch):
    """A sweep whose cache holds one garbled result, one garbled network and one garbled
    checkpoint finishes with one warning per file and the numbers of a clean run."""
    import hashlib
    import shutil

    from monosem.experiments.figures import run_figure

    monkeypatch.setenv("MONOSEM_MAX_STACK", "1")
    select = dict(methods=["mlp-relu", "gated-laplace"], executor="inprocess", progress=False)
    clean = ResultCache(tmp_path / "clean")
    ref = run_figure("fig4", "smoke", cache=clean, **select)
    shutil.copytree(clean.root, tmp_path / "hurt")
    hurt = ResultCache(tmp_path / "hurt")
    by = {(j.method, j.K): j for j in ref}
    # 1. a truncated result file
    bad_json = hurt.path(by[("gated-laplace", 2)])
    bad_json.write_text('{"config": {"K"')
    # 2. a garbled trained network (the source of the K = 2 gated cell)
    bad_model = hurt.root / "models" / f"{by[('mlp-relu', 2)].key()}.pt"
    bad_model.write_bytes(b"\x00garbage")
    # 3. a garbled checkpoint of a network that has to be trained again
    relu10 = by[("mlp-relu", 10)]
    hurt.path(relu10).unlink()
    tag = hashlib.sha256(relu10.key().encode()).hexdigest()[:16]
    bad_ckpt = hurt.root / "checkpoints" / f"{tag}.pt"
    bad_ckpt.parent.mkdir(exist_ok=True)
    bad_ckpt.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.warns(RuntimeWarning) as caught:
        got = run_figure("fig4", "smoke", cache=hurt, **select)
    named = " ".join(str(w.message) for w in caught)
    for path in (bad_json, bad_model, bad_ckpt):
        assert str(path) in named and path.with_name(path.name + ".corrupt").exists()
    for job, rec in ref.items():
        assert got[job]["metrics"]["test_mse"] == rec["metrics"]["test_mse"], job.label()


# a cell file is trusted only after its schema check: each of these is damage
DAMAGE = {
    "undecodable bytes": b'{"config": \xd1\x00',
    "test_mse a string": {"test_mse": "banana"},
    "test_mse null": {"test_mse": None},
    "test_mse a list": {"test_mse": [0.1]},
    "test_mse negative": {"test_mse": -5.0},
    "test_mse NaN": {"test_mse": float("nan")},
    "train_mse infinite": {"test_mse": 0.1, "train_mse": float("inf")},
    "test_mse a bool": {"test_mse": True},
    "a string in the iterations": {"test_mse": 0.1, "test_mse_by_iteration": [0.1, "x"]},
    "metrics a list": [0.1],
}


def damage(cache: ResultCache, job: Job, how) -> None:
    """Write ``how`` over ``job``'s result file: raw bytes, or metrics put in its record."""
    path = cache.path(job)
    if isinstance(how, bytes):
        path.write_bytes(how)
        return
    record = json.loads(path.read_text())
    record["metrics"] = how
    path.write_text(json.dumps(record, allow_nan=True))


@pytest.mark.parametrize("how", list(DAMAGE), ids=list(DAMAGE))
def test_a_cell_file_is_trusted_only_after_its_schema_check(tmp_path, how):
    c = ResultCache(tmp_path)
    job = _jobs()[0]
    c.save(job, {"test_mse": 0.5}, 0.1)
    damage(c, job, DAMAGE[how])
    with pytest.warns(RuntimeWarning, match=re.escape(str(c.path(job)))) as caught:
        done, missing = c.status([job])
    assert (done, missing, c.damaged) == ([], [job], [job]) and not c.has(job)
    assert c.path(job).with_name(c.path(job).name + ".corrupt").exists()
    # it counts as missing: "recomputed" is said only where something recomputes it
    assert "counts as missing" in str(caught[0].message) and "and recomputed" not in str(caught[0].message)


def test_a_question_cell_may_hold_a_table_of_errors(tmp_path):
    c = ResultCache(tmp_path)
    job = _jobs()[0]
    table = {"start": {"iteration 0": 0.01, "test points": 4096.0}}
    c.save(job, {"test_mse": table, "test_mse_by_iteration": [0.2, 0.1], "stop_reason": "target"}, 0.1)
    assert c.load(job)["metrics"]["test_mse"] == table


def test_a_result_that_is_no_result_is_not_cached(tmp_path):
    c = ResultCache(tmp_path)
    job = _jobs()[0]
    with pytest.raises(ValueError, match=r"toy K=1 n=10 run=0 is not cached: test_mse=nan"):
        c.save(job, {"test_mse": float("nan")}, 0.1)
    assert not c.has(job)


def test_an_empty_cache_path_is_refused(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="cache root is empty"):
        ResultCache("")
    monkeypatch.setenv("MONOSEM_CACHE", "")
    with pytest.raises(ValueError, match="MONOSEM_CACHE is set but empty"):
        ResultCache()
    monkeypatch.setenv("MONOSEM_CACHE", str(tmp_path))
    assert ResultCache().root == tmp_path


def test_cells_keep_their_keys_and_layout(tmp_path):
    """A cache written before cells had locks reads the same: one ``<method>/<key>.json`` per
    cell, the key unchanged; a lock is a file of its own beside it."""
    c = ResultCache(tmp_path)
    job = toy_job("toy", 2, 20, 1)
    assert c.path(job) == tmp_path / "toy" / f"{job.key()}.json"
    c.save(job, {"test_mse": 0.5}, 0.1)
    assert c.load(job)["key"] == job.key() and not list(tmp_path.glob("*/*.lock"))
    with c.lock(job):
        assert (tmp_path / "toy" / f"{job.key()}.lock").exists()
    assert sorted(p.name for p in (tmp_path / "toy").glob("*.json")) == [f"{job.key()}.json"]
