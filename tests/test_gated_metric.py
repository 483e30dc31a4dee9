"""The diagnosis of the gated RFM's metric updates refits exactly the recorded pipeline."""

from __future__ import annotations

import pytest

from monosem.experiments.cache import ResultCache
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
    tables = diagnosis_tables(None)
    assert all(t.empty for t in tables)
