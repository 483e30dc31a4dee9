"""Page 09, question 2: rare regimes (:mod:`monosem.experiments.questions.rare_regimes`)."""

import pytest
import torch

from monosem.experiments.questions import rare_regimes
from monosem.experiments.cache import ResultCache
from monosem.experiments.figures import run_figure
from monosem.experiments.methods import dataset
from monosem.experiments.sweeps import sweep


def test_zipf_at_smoke_per_cluster_table_and_verdict(tmp_path, monkeypatch):
    """The rare-regime cells name their exponent (0 too), train on the Zipf law, test on a
    cluster-balanced set, and record the per-cluster test MSE and specialized neurons."""
    from monosem.__main__ import main

    monkeypatch.setenv("TQDM_DISABLE", "1")
    jobs = sweep("zipf", "smoke")
    assert {j.data.zipf for j in jobs} == {0.0, 2.0}
    assert not {j.key() for j in jobs} & {j.key() for j in sweep("fig2", "smoke")}
    rare = next(j for j in jobs if j.data.zipf == 2.0 and j.method == "rfm")
    _, (_, _, c), (_, _, cte) = dataset(rare)
    assert torch.bincount(cte, minlength=10).tolist() == [50] * 10  # balanced test set
    assert int(torch.bincount(c, minlength=10)[0]) > 5 * int(torch.bincount(c, minlength=10)[9])
    records = run_figure("zipf", "smoke", cache=ResultCache(tmp_path), n_jobs=1, progress=False)
    for job, rec in records.items():
        by = rec["metrics"]["test_mse_by_cluster"]
        assert len(by) == 10 and sum(by) / 10 == pytest.approx(rec["metrics"]["test_mse"], rel=1e-9)
        if job.method.startswith("mlp-"):
            assert len(rec["metrics"]["specialized_by_cluster"]) == 10
    rows = rare_regimes.zipf_rows(records)
    assert [r["s"] for r in rows] == [0.0, 2.0] and rows[1]["pi"][0] > rows[1]["pi"][9]
    # the population risk weighs the frequent clusters: at s = 0 it is the balanced mean
    assert rows[0]["rfm_risk"] == pytest.approx(rows[0]["rfm_mean"], rel=1e-9)
    # the table: per exponent one row per cluster, then its mean and its risk under the law
    df = rare_regimes.zipf_frame(rows)
    assert df.index.names == ["s", "cluster"] and len(df) == 2 * (10 + 2)
    at2 = df.loc[2.0]
    assert list(at2.index) == [*range(10), "mean", "risk under pi"]
    assert at2.loc[0, "pi_c"] == rows[1]["pi"][0] and at2.loc[9, "training points n_c"] == rows[1]["n_train"][9]
    assert at2.loc[3, "RFM oracle test MSE"] == rows[1]["oracle-rfm"][3]
    assert at2.loc["risk under pi", "global RFM test MSE"] == rows[1]["rfm_risk"]
    assert at2.loc[4, "ReLU active neurons (c_j = c)"] == rows[1]["relu_neurons"][4]
    assert df["training points n_c"].dtype == "Int64" and df["ReLU MLP test MSE"].dtype.kind == "f"
    findings = rare_regimes.zipf_findings(rows)
    assert "rarest clusters" in findings and max(len(line) for line in findings.splitlines()) <= 80
    # the page's one-line answer says what the findings say
    answer = rare_regimes.zipf_answer(rows)
    assert ("gains ground" in answer) == ("gains ground" in findings) and ("loses ground" in answer) == ("loses ground" in findings)
    # the CLI draws the figure from the same cells
    out = tmp_path / "zipf.png"
    assert main(["plot", "zipf", "--profile", "smoke", "--cache", str(tmp_path), "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000
