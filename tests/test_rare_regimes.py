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
    # the page's scale sentence: the cells' n, width and batch, and the best MLP over the oracle at s = 0
    net = next(j.spec for j in records if j.method == "mlp-relu")
    best = min(rows[0]["mlp-relu_mean"], rows[0]["mlp-reglu_mean"]) / rows[0]["oracle-rfm_mean"]
    scale = rare_regimes.zipf_scale(records, rows)
    assert f"width {net.width} and batch {net.batch}" in scale and f"{best:.2g}× the RFM oracle's" in scale
    assert rare_regimes.zipf_scale({}, []) == "not computed yet"
    # the CLI draws the figure from the same cells
    out = tmp_path / "zipf.png"
    assert main(["plot", "zipf", "--profile", "smoke", "--cache", str(tmp_path), "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000


def _zipf_row(s: float, mse: dict[str, list[float]]) -> dict:
    pi = [0.5 ** c for c in range(10)] if s else [0.1] * 10
    return {"s": s, "K": 10, "pi": pi, "n_train": [round(1000 * p / sum(pi)) for p in pi], "relu_neurons": None,
            "relu_specialized": None, "reglu_neurons": None, "reglu_specialized": None,
            **mse, **{f"{m}_mean": sum(v) / 10 for m, v in mse.items()}}


def test_the_rare_regime_box_does_not_rest_on_one_cluster():
    """The oracle fails on one rare cluster (its MSE 100x) while the best MLP loses 4.2x on every
    rare one: the ratio of the geometric means says "gains ground", the per-cluster median (the
    box's rule) says "loses ground", and the box names the one cluster behind the difference."""
    base = {m: [0.01] * 10 for m in ("mlp-relu", "mlp-reglu", "rfm", "oracle-rfm")}
    rare = {"mlp-relu": [0.01] * 7 + [0.042] * 3, "mlp-reglu": [0.02] * 10, "rfm": [0.02] * 10,
            "oracle-rfm": [0.01] * 7 + [0.015, 0.015, 1.0]}
    rows = [_zipf_row(0.0, base), _zipf_row(2.0, rare)]
    answer = rare_regimes.zipf_answer(rows)
    assert answer.startswith("s = 2: the best MLP loses ground on the oracle on the 3 rarest clusters (it gains ground on 1 of "
                             "them; its loss is a median 2.80× the oracle's)")
    assert "because of cluster 9, where the oracle's MSE is 1" in answer
    findings = rare_regimes.zipf_findings(rows)
    assert "loses ground" in findings and "median 2.80" in findings and max(len(line) for line in findings.splitlines()) <= 80
    # where every rare cluster agrees, the geometric mean and the median agree and nothing is flagged
    rare["oracle-rfm"] = [0.01] * 7 + [0.1] * 3
    answer = rare_regimes.zipf_answer([_zipf_row(0.0, base), _zipf_row(2.0, rare)])
    assert "gains ground on the oracle on the 3 rarest clusters (it gains ground on 3 of them" in answer
    assert "because of" not in answer


def test_the_rare_regime_box_says_when_its_premise_is_absent():
    """Without specialized neurons at s = 0 the box does not answer for specialization."""
    base = {m: [0.01] * 10 for m in ("mlp-relu", "mlp-reglu", "rfm", "oracle-rfm")}
    rows = [_zipf_row(0.0, base) | {"relu_neurons": [6] * 10, "relu_specialized": [0] * 9 + [1],
                                    "reglu_neurons": [6] * 10, "reglu_specialized": [0] * 10},
            _zipf_row(2.0, base)]
    holds, measured = rare_regimes.premise(rows)
    assert holds is False and measured.startswith("1.7 % (ReLU) and 0 % (ReGLU gate) of the active neurons specialized")
    answer = rare_regimes.zipf_answer(rows)
    assert answer.startswith("not answered for specialization at this scale: the premise is absent (1.7 % (ReLU)")
    assert "as networks only, s = 2: the best MLP" in answer
    rows[0]["relu_specialized"] = [3] * 10
    assert rare_regimes.premise(rows)[0] is True and rare_regimes.zipf_answer(rows).startswith("s = 2")


def test_zipf_shares_follow_the_law():
    top, rarest = rare_regimes.zipf_shares(10, 2.0)
    harmonic = sum((c + 1) ** -2.0 for c in range(10))
    assert top == pytest.approx(1 / harmonic) and rarest == pytest.approx(100 ** -1 / harmonic)
    assert rare_regimes.zipf_shares(10, 0.0) == pytest.approx((0.1, 0.1))
