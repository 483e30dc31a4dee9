"""The diagnosis of the gated RFM's metric updates refits exactly the recorded pipeline."""

from __future__ import annotations

import pytest

from monosem.experiments.cache import Job, ResultCache
from monosem.experiments.questions.gated_metric import diagnosis_tables, metric_updates_by_start
from monosem.experiments.methods import compute
from monosem.experiments.sweeps import sweep


def test_the_paper_start_is_the_recorded_gated_rfm_and_the_identity_start_is_isotropic(tmp_path):
    job = sweep("fig4", "smoke", Ks=[10], methods=["gated-rfm"])[0]
    cache = ResultCache(tmp_path)
    mse, metrics = metric_updates_by_start(job, cache)  # trains the missing source network
    cell = compute(job, cache)
    paper = mse.loc["G_c (paper)"]
    assert [paper[f"iteration {t}"] for t in range(4)] == pytest.approx(cell["test_mse_by_iteration"], rel=1e-9)
    assert mse["misrouted test points"].between(0, mse["test points"]).all()
    start = metrics[(metrics["start"] == "identity") & (metrics["iteration"] == 0)]
    assert start["effective rank"].to_numpy() == pytest.approx(20.0)  # M_0 = I in d = 20
    assert metrics["share on v_c"].between(0, 1 + 1e-9).all()
    tables = diagnosis_tables({})
    assert all(t.empty for t in tables)


def test_the_diagnosis_is_a_cell_and_the_recorded_entries_are_found_as_cells(tmp_path):
    """A diagnosis is a cell of its gated RFM cell; every recorded diagnosis (those recorded in one
    named file before they were cells among them) is found as the recorded cell of its (K, n,
    run), and its start from G_c is that gated
    cell's own fit: the same test MSE at every iteration, to the last bits of a retrained network
    (the diagnosis trained its source network alone, the recorded cell in a stack of networks,
    whose float32 sums run in another order)."""
    import pytest

    from monosem.experiments.questions import gated_metric as gm
    from monosem.experiments.recorded import load_recorded_cells, recorded_cells_dir
    from monosem.profiles import get_profile

    L = get_profile("long")
    found = gm.recorded_diagnosis(L)

    def found_spec(job):  # the spec of Figure 4's gated RFM cell at the same data
        return next(j.spec for j in sweep("fig4", L, Ks=[job.K], methods=["gated-rfm"]) if j.data == job.data)
    assert {p.stem for p in (recorded_cells_dir("long") / gm.METHOD).glob("*.json")} == {j.key() for j in found}
    assert len(found) >= 10
    gated = load_recorded_cells([Job("gated-rfm", j.data, j.spec, "long") for j in found], "long")
    for job, rec in found.items():
        assert job.method == gm.METHOD and job.spec == found_spec(job)
        cell = gated[Job("gated-rfm", job.data, job.spec, "long")]["metrics"]["test_mse_by_iteration"]
        paper = rec["metrics"]["test_mse"]["G_c (paper)"]
        assert [paper[f"iteration {t}"] for t in range(4)] == pytest.approx(cell, rel=0.05)
    mse, _ = gm.diagnosis_tables(found)
    assert len(mse) == 2 * len(found)
    smoke = sweep("gated-metric", "smoke")
    assert all(j.K == 2 and j.method == gm.METHOD for j in smoke) and len(smoke) == len(sweep("fig4", "smoke", Ks=[2], methods=["gated-rfm"]))


def test_recording_a_restored_diagnosis_writes_no_second_copy(tmp_path, monkeypatch):
    """A recorded diagnosis restored into a cache and recorded again is one cell file, the
    recorded one's numbers; recording it once more writes no second copy."""
    import json

    from monosem.experiments import recorded
    from monosem.experiments.cache import ResultCache

    jobs = [j for j in sweep("gated-metric", "long") if j.n == 20_000 and j.run == 0]
    cache = ResultCache(tmp_path / "cache")
    assert recorded.restore_cells(jobs, cache, "long") == 1
    shipped = recorded.load_recorded_cells(jobs, "long")
    monkeypatch.setattr(recorded, "recorded_cells_dir", lambda profile: tmp_path / "cells")
    recorded.record_cells(jobs, cache, "long")
    recorded.record_cells(jobs, cache, "long")
    files = list((tmp_path / "cells").rglob("*.json"))
    assert len(files) == 1
    again = json.loads(files[0].read_text(encoding="utf-8"))
    assert again["metrics"] == next(iter(shipped.values()))["metrics"]