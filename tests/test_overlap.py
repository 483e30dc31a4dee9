"""Page 09, question 1: the overlap sweep (:mod:`monosem.experiments.questions.overlap`)."""

import math

import pytest

from monosem.data import mixed_link_model
from monosem.experiments.questions import overlap
from monosem.experiments.cache import ResultCache
from monosem.experiments.figures import run_figure
from monosem.experiments.families.gated import source_job
from monosem.experiments.methods import dataset
from monosem.experiments.specs import PAPER_GAMMA
from monosem.experiments.sweeps import sweep


def test_overlap_cells_at_the_papers_gamma_are_figure_2_and_4_cells():
    jobs = sweep("overlap", "cpu")
    paper = [j for j in jobs if j.data.gamma == PAPER_GAMMA]
    assert {j.method for j in paper} == {"mlp-relu", "mlp-reglu", "rfm", "oracle-rfm", "gated-rfm", "bayes"}
    fig2 = {j.key() for j in sweep("fig2", "cpu", Ks=[10], ns=[5000])}
    fig4 = {j.key() for j in sweep("fig4", "cpu", Ks=[10], ns=[5000])}
    assert {j.key() for j in paper} <= fig2 | fig4  # computed once, shared
    low = [j for j in jobs if j.data.gamma == 0.25]
    gated = next(j for j in low if j.method == "gated-rfm")
    assert source_job(gated).data.gamma == 0.25  # its source network is the gamma-0.25 one
    # the data of a cell follow its gamma: sigma_K = (1 - rho_K) / (2 gamma)
    model, _, _ = dataset(next(j for j in low if j.method == "bayes"))
    ref = mixed_link_model(10)
    assert model.info["sigma_K"] == pytest.approx(ref.info["sigma_K"] * PAPER_GAMMA / 0.25)


def test_overlap_at_smoke_gives_table_findings_and_bayes_risk(tmp_path, monkeypatch):
    from monosem.__main__ import main

    monkeypatch.setenv("TQDM_DISABLE", "1")
    records = run_figure("overlap", "smoke", cache=ResultCache(tmp_path), n_jobs=1, progress=False)
    mlp = [rec for j, rec in records.items() if j.method.startswith("mlp-")]
    assert all(0 <= rec["metrics"]["frac_A071"] <= 1 and rec["metrics"]["n_active"] > 0 for rec in mlp)
    risks = overlap.bayes_risks("smoke")
    # more overlap, higher Bayes risk; at the paper's gamma it is the label-noise floor
    assert risks[0.5][0] > 10 * risks[4.0][0] and risks[4.0][0] == pytest.approx(4e-4, rel=0.2)
    rows = overlap.overlap_rows(records, risks)
    assert [r["gamma"] for r in rows] == [4.0, 0.5] and rows[1]["sigma_K"] > rows[0]["sigma_K"]
    assert all(r[m] is not None and math.isfinite(r[m]) for r in rows for m in ("mlp-relu", "rfm", "gated-rfm", "bayes"))
    # the table: one row per gamma, its numbers as numbers, the same as the rows'
    df = overlap.overlap_frame(rows)
    assert list(df.index) == [4.0, 0.5] and df.index.name == "gamma"
    assert df["global RFM test MSE"].tolist() == [r["rfm"] for r in rows]
    assert df["Bayes risk"].tolist() == [r["bayes_risk"] for r in rows]
    assert df["ReLU A ≥ .71 (%)"].tolist() == pytest.approx([100 * r["relu_frac_A071"] for r in rows])
    assert df["ReLU active neurons"].dtype.kind == "i" and df["gate ARI"].dtype.kind == "f"
    assert df["ReLU stop"].tolist() == [r["relu_stop"] for r in rows]
    findings = overlap.overlap_findings(rows)
    assert "best MLP / global RFM" in findings and "Bayes risk at the smallest gamma" in findings
    assert overlap.overlap_answer(rows) in findings  # the page's one-line answer is the findings' conclusion
    # a missing cell is a missing number, not a string
    gap = overlap.overlap_frame([rows[0] | {"rfm": None, "gate_ari": None}])
    assert gap["global RFM test MSE"].isna().all() and gap["gate ARI"].dtype.kind == "f"
    assert overlap.overlap_frame([]).empty
    # the CLI draws the figure from the same cells
    out = tmp_path / "overlap.png"
    assert main(["plot", "overlap", "--profile", "smoke", "--cache", str(tmp_path), "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000


def _gamma_row(gamma: float, mlp: float, rfm: float, relu_share: float | None, reglu_share: float | None) -> dict:
    return {"gamma": gamma, "mlp-relu": mlp, "mlp-reglu": mlp * 1.1, "rfm": rfm, "gated-rfm": rfm * 1.2,
            "relu_frac_A071": relu_share, "reglu_frac_A071": reglu_share}


def test_the_overlap_box_says_the_premise_is_absent_without_specialized_neurons():
    """With almost no specialized neurons at the paper's gamma (0.39 % ReLU, 0 % ReGLU gate) the
    box does not conclude where specialization stops helping; with them, it does."""
    absent = [_gamma_row(4.0, 0.05, 0.1, 0.0039, 0.0), _gamma_row(1.0, 0.2, 0.1, 0.001, 0.0)]
    answer = overlap.overlap_answer(absent)
    assert answer.startswith("not answered at this scale: the premise is absent") and "stops helping" not in answer
    assert "0.39 % (ReLU) and 0 % (ReGLU gate)" in answer and f"{100 * overlap.PREMISE_SHARE:.2g} %" in answer
    assert overlap.premise(absent)[0] is False
    present = [_gamma_row(4.0, 0.05, 0.1, 0.4, 0.6), _gamma_row(1.0, 0.2, 0.1, 0.3, 0.5)]
    assert overlap.overlap_answer(present).startswith("specialization stops helping at gamma = 1")
    assert overlap.premise([])[0] is None
