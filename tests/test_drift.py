"""Page 10, question 5: drifting directions (:mod:`monosem.experiments.questions.drift`)."""

import math

import pytest

from monosem.experiments.questions import drift


@pytest.mark.slow
def test_drift_at_smoke_counts_add_up():
    rows = drift.drift_runs("smoke", angles=(60.0,))
    (r,) = rows
    assert r["realigned"] + r["recruited"] <= r["spec_phase2"] <= r["active_phase2"]
    assert r["realigned"] + r["lost"] <= r["spec_phase1"] <= r["active_phase1"]
    assert all(math.isfinite(r[k]) for k in ("continued_test", "scratch_test", "phase1_test_old", "phase1_test_new"))
    # the table: one row per angle, counts as integers, test MSEs as floats
    df = drift.drift_frame(rows)
    assert list(df.index) == [60.0] and df.index.name == "angle (degrees)"
    assert df.loc[60.0, "continued test MSE"] == r["continued_test"] and df.loc[60.0, "re-aligned"] == r["realigned"]
    assert df.loc[60.0, "updates per phase"] == r["steps"] and df.loc[60.0, "phase-1 active"] == r["active_phase1"]
    assert df["specialized"].dtype.kind == "i" and df["cos angle"].dtype.kind == "f"
    assert max(len(line) for line in drift.drift_findings(rows).splitlines()) <= 80
    assert drift.drift_frame([]).empty and list(drift.drift_frame([]).columns) == list(df.columns)
    # the verdict follows the numbers
    made = dict(r) | {"spec_phase1": 10, "active_phase1": 20, "spec_phase2": 10, "realigned": 7, "recruited": 3, "lost": 3, "realigned_cosine": 0.8,
                      "continued_test": 0.1, "scratch_test": 0.2}
    for text in (drift.drift_findings([made]), drift.drift_answer([made])):
        assert "mostly re-aligned" in text and "most re-aligned" in text and "phase 1 helps" in text
    made |= {"realigned": 2, "recruited": 8, "lost": 8, "continued_test": 0.3}
    for text in (drift.drift_findings([made]), drift.drift_answer([made])):
        assert "mostly recruited" in text and "most lost" in text and "phase 1 hurts" in text


def test_the_drift_box_says_most_specialists_were_lost_when_they_were():
    """The new specialists can be mostly re-aligned while most of the old ones were lost (205 of
    252 lost, 41 re-aligned, 19 recruited): the box gives both counts and does not say "re-aligned"
    of the neurons at large."""
    row = {"angle": 60.0, "spec_phase1": 252, "active_phase1": 400, "spec_phase2": 60, "realigned": 41, "recruited": 19, "lost": 205,
           "continued_test": 0.1, "scratch_test": 0.2}
    answer = drift.drift_answer([row])
    assert "of 252 specialized neurons 41 re-aligned and 205 lost (most lost)" in answer
    assert "the new specialists mostly re-aligned (41 re-aligned, 19 recruited)" in answer
    # without specialized neurons after phase 1 there is nothing to follow the drift
    answer = drift.drift_answer([row | {"spec_phase1": 0, "realigned": 0, "lost": 0}])
    assert answer.startswith("60 degrees: not answered at this scale, the premise is absent (0 of 400 active neurons")


@pytest.mark.slow
def test_drift_is_cells_of_the_result_store(tmp_path, monkeypatch):
    """Each angle is a cached cell: through a cache the rows are those computed without one, a
    second call computes nothing, and a cell recomputed later continues the saved phase-1 network;
    the key names the data kind; the figure lists one cell per angle; the export has one row per
    angle."""
    from monosem.data import DRIFT_ANGLES
    from monosem.experiments.cache import ResultCache
    from monosem.experiments.export import export_rows
    from monosem.experiments.sweeps import sweep

    monkeypatch.setenv("TQDM_DISABLE", "1")
    angles = (30.0, 90.0)
    plain = drift.drift_runs("smoke", angles=angles)
    cache = ResultCache(tmp_path)
    cached = drift.drift_runs("smoke", angles=angles, cache=cache)
    assert cached == plain and [list(r) for r in cached] == [list(r) for r in plain]
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".lock")  # a cell's lock beside it
    assert len(files) == 3 and sum(p.suffix == ".pt" for p in files) == 1  # two cells, one phase-1 network
    assert drift.drift_runs("smoke", angles=angles, cache=cache) == plain
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".lock") == files
    jobs = drift.drift_jobs("smoke", angles)
    cache.path(jobs[1]).unlink()  # recomputed from the saved phase-1 network: the same row
    assert drift.drift_runs("smoke", angles=angles, cache=cache) == plain
    config = jobs[0].config()
    assert config["data"] == {"kind": "DriftData", "K": 10, "n": 4000, "run": 0, "n_val": 512, "n_test": 512, "angle": 30.0}
    assert config["spec"]["kind"] == "DriftSpec" and config["spec"]["activation"] == "relu" and config["spec"]["steps"] == 150
    # the figure at a profile: one cell per angle of the page
    smoke = sweep("drift", "smoke")
    assert [j.data.angle for j in smoke] == list(DRIFT_ANGLES) and {j.method for j in smoke} == {"drift"}
    assert smoke[:1] == drift.drift_jobs("smoke", (30.0,))
    records = {job: cache.load(job) for job in jobs}
    rows = export_rows("drift", "smoke", records)
    assert [r["angle"] for r in rows] == list(angles) and [r["key"] for r in rows] == [j.key() for j in jobs]
    assert all(r["figure"] == "drift" and r["test_mse"] == r["continued_test"] for r in rows)
    assert {k: rows[0][k] for k in plain[0]} == plain[0]
