"""Page 10, question 5: drifting directions (:mod:`monosem.experiments.questions.drift`)."""

import math

from monosem.experiments.questions import drift


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
    made = dict(r) | {"spec_phase2": 10, "realigned": 7, "recruited": 3, "realigned_cosine": 0.8,
                      "continued_test": 0.1, "scratch_test": 0.2}
    for text in (drift.drift_findings([made]), drift.drift_answer([made])):
        assert "mostly re-aligned" in text and "phase 1 helps" in text
    made |= {"realigned": 2, "recruited": 8, "continued_test": 0.3}
    for text in (drift.drift_findings([made]), drift.drift_answer([made])):
        assert "mostly recruited" in text and "phase 1 hurts" in text
