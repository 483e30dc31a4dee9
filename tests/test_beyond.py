"""Page 09 (beyond the paper): the overlap sweep."""

import math

import pytest
import torch

from monosem.data import mixed_link_model
from monosem.experiments import beyond
from monosem.experiments.cache import ResultCache
from monosem.experiments.figures import run_figure
from monosem.experiments.methods import dataset
from monosem.experiments.sweeps import PAPER_GAMMA, sweep


def test_overlap_cells_at_the_papers_gamma_are_figure_2_and_4_cells():
    jobs = sweep("overlap", "cpu")
    paper = [j for j in jobs if "gamma" not in j.param_dict]
    assert {j.method for j in paper} == {"mlp-relu", "mlp-reglu", "rfm", "oracle-rfm", "gated-rfm", "bayes"}
    fig2 = {j.key() for j in sweep("fig2", "cpu", Ks=[10], ns=[5000])}
    fig4 = {j.key() for j in sweep("fig4", "cpu", Ks=[10], ns=[5000])}
    assert {j.key() for j in paper} <= fig2 | fig4  # computed once, shared
    low = [j for j in jobs if j.param_dict.get("gamma") == 0.25]
    gated = next(j for j in low if j.method == "gated-rfm")
    assert dict(gated.param_dict["source"])["gamma"] == 0.25  # its source network is the gamma-0.25 one
    # the data of a cell follow its gamma: sigma_K = (1 - rho_K) / (2 gamma)
    model, _, _ = dataset(next(j for j in low if j.method == "bayes"))
    ref = mixed_link_model(10)
    assert model.info["sigma_K"] == pytest.approx(ref.info["sigma_K"] * PAPER_GAMMA / 0.25)


def test_overlap_at_smoke_gives_table_findings_and_bayes_risk(tmp_path, monkeypatch):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    records = run_figure("overlap", "smoke", cache=ResultCache(tmp_path), n_jobs=1, progress=False)
    mlp = [rec for j, rec in records.items() if j.method.startswith("mlp-")]
    assert all(0 <= rec["metrics"]["frac_A071"] <= 1 and rec["metrics"]["n_active"] > 0 for rec in mlp)
    risks = beyond.bayes_risks("smoke")
    # more overlap, higher Bayes risk; at the paper's gamma it is the label-noise floor
    assert risks[0.5][0] > 10 * risks[4.0][0] and risks[4.0][0] == pytest.approx(4e-4, rel=0.2)
    rows = beyond.overlap_rows(records, risks)
    assert [r["gamma"] for r in rows] == [4.0, 0.5] and rows[1]["sigma_K"] > rows[0]["sigma_K"]
    assert all(r[m] is not None and math.isfinite(r[m]) for r in rows for m in ("mlp-relu", "rfm", "gated-rfm", "bayes"))
    text = beyond.format_overlap(rows)
    assert "global RFM" in text and "gate ARI" in text
    findings = beyond.overlap_findings(rows)
    assert "best MLP / global RFM" in findings and "Bayes risk at the smallest gamma" in findings


def test_swaps_at_smoke_table_and_verdict(tmp_path, monkeypatch):
    """The routing-or-features sweep shares the paper's gated cells and computes its verdict from
    the four Laplace pipelines."""
    monkeypatch.setenv("TQDM_DISABLE", "1")
    jobs = sweep("swaps", "smoke")
    fig4 = {j.key() for j in sweep("fig4", "smoke")}
    shared = {j.method for j in jobs if j.key() in fig4}
    assert shared == {"mlp-relu", "gated-laplace", "oracle-laplace", "gated-rfm", "oracle-rfm"}
    records = run_figure("swaps", "smoke", cache=ResultCache(tmp_path), n_jobs=1, progress=False)
    rows = beyond.swap_rows(records)
    assert [r["K"] for r in rows] == [2, 10]
    assert all(r[m] is not None and math.isfinite(r[m]) for r in rows for m in beyond.SWAP_GRID.values())
    true_gc = [rec["metrics"]["gate_ari_test"] for j, rec in records.items() if j.method == "oracle-laplace-gc"]
    assert true_gc == [1.0, 1.0]
    text = beyond.format_swaps(rows) + "\n" + beyond.swap_findings(rows)
    assert max(len(line) for line in text.splitlines()) <= 80
    # the verdict follows the numbers: make the metric's gain the larger one, then the routing's
    row = dict(rows[0]) | {"gated-laplace-iso": 1.0, "gated-laplace": 0.1, "oracle-laplace": 1.0, "oracle-laplace-gc": 0.09}
    assert "the features carry more" in beyond.swap_findings([row])
    row |= {"gated-laplace-iso": 0.2, "oracle-laplace-gc": 0.01}
    assert "the routing carries more" in beyond.swap_findings([row])


def test_zipf_at_smoke_per_cluster_table_and_verdict(tmp_path, monkeypatch):
    """The rare-regime cells name their exponent (0 too), train on the Zipf law, test on a
    cluster-balanced set, and record the per-cluster test MSE and specialized neurons."""
    monkeypatch.setenv("TQDM_DISABLE", "1")
    jobs = sweep("zipf", "smoke")
    assert {j.param_dict["zipf"] for j in jobs} == {0.0, 2.0}
    assert not {j.key() for j in jobs} & {j.key() for j in sweep("fig2", "smoke")}
    rare = next(j for j in jobs if j.param_dict["zipf"] == 2.0 and j.method == "rfm")
    _, (_, _, c), (_, _, cte) = dataset(rare)
    assert torch.bincount(cte, minlength=10).tolist() == [50] * 10  # balanced test set
    assert int(torch.bincount(c, minlength=10)[0]) > 5 * int(torch.bincount(c, minlength=10)[9])
    records = run_figure("zipf", "smoke", cache=ResultCache(tmp_path), n_jobs=1, progress=False)
    for job, rec in records.items():
        by = rec["metrics"]["test_mse_by_cluster"]
        assert len(by) == 10 and sum(by) / 10 == pytest.approx(rec["metrics"]["test_mse"], rel=1e-9)
        if job.method.startswith("mlp-"):
            assert len(rec["metrics"]["specialized_by_cluster"]) == 10
    rows = beyond.zipf_rows(records)
    assert [r["s"] for r in rows] == [0.0, 2.0] and rows[1]["pi"][0] > rows[1]["pi"][9]
    # the population risk weighs the frequent clusters: at s = 0 it is the balanced mean
    assert rows[0]["rfm_risk"] == pytest.approx(rows[0]["rfm_mean"], rel=1e-9)
    text = beyond.format_zipf(rows) + "\n" + beyond.zipf_findings(rows)
    assert "rarest clusters" in text and max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("figure", ["zipf", "swaps"])
def test_beyond_figures_plot_from_the_cli(figure, tmp_path, monkeypatch):
    from monosem.__main__ import main

    monkeypatch.setenv("TQDM_DISABLE", "1")
    run_figure(figure, "smoke", cache=ResultCache(tmp_path), n_jobs=1, progress=False)
    out = tmp_path / f"{figure}.png"
    assert main(["plot", figure, "--profile", "smoke", "--cache", str(tmp_path), "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000


def test_drift_at_smoke_counts_add_up():
    rows = beyond.drift_runs("smoke", angles=(60.0,))
    (r,) = rows
    assert r["realigned"] + r["recruited"] <= r["spec_phase2"] <= r["active_phase2"]
    assert r["realigned"] + r["lost"] <= r["spec_phase1"] <= r["active_phase1"]
    assert all(math.isfinite(r[k]) for k in ("continued_test", "scratch_test", "phase1_test_old", "phase1_test_new"))
    text = beyond.format_drift(rows) + "\n" + beyond.drift_findings(rows)
    assert max(len(line) for line in text.splitlines()) <= 80
    # the verdict follows the numbers
    made = dict(r) | {"spec_phase2": 10, "realigned": 7, "recruited": 3, "realigned_cosine": 0.8,
                      "continued_test": 0.1, "scratch_test": 0.2}
    assert "mostly re-aligned" in beyond.drift_findings([made]) and "phase 1 helps" in beyond.drift_findings([made])
    made |= {"realigned": 2, "recruited": 8, "continued_test": 0.3}
    assert "mostly recruited" in beyond.drift_findings([made]) and "phase 1 hurts" in beyond.drift_findings([made])
