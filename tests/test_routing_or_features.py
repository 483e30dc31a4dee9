"""Page 09, question 4: routing or features? (:mod:`monosem.experiments.questions.routing_or_features`)."""

import math

from monosem.experiments.questions import routing_or_features as rof
from monosem.experiments.cache import ResultCache
from monosem.experiments.figures import run_figure
from monosem.experiments.sweeps import sweep


def test_swaps_at_smoke_table_and_verdict(tmp_path, monkeypatch):
    """The routing-or-features sweep shares the paper's gated cells and computes its verdict from
    the four Laplace pipelines."""
    from monosem.__main__ import main

    monkeypatch.setenv("TQDM_DISABLE", "1")
    jobs = sweep("swaps", "smoke")
    fig4 = {j.key() for j in sweep("fig4", "smoke")}
    shared = {j.method for j in jobs if j.key() in fig4}
    assert shared == {"mlp-relu", "gated-laplace", "oracle-laplace", "gated-rfm", "oracle-rfm"}
    records = run_figure("swaps", "smoke", cache=ResultCache(tmp_path), n_jobs=1, progress=False)
    rows = rof.swap_rows(records)
    assert [r["K"] for r in rows] == [2, 10]
    assert all(r[m] is not None and math.isfinite(r[m]) for r in rows for m in rof.SWAP_GRID.values())
    true_gc = [rec["metrics"]["gate_ari_test"] for j, rec in records.items() if j.method == "oracle-laplace-gc"]
    assert true_gc == [1.0, 1.0]
    # the table: one row per K, the 2 x 2 design and the references as numbers
    df = rof.swaps_frame(rows)
    assert list(df.index) == [2, 10] and df.index.name == "K" and df["n"].dtype.kind == "i"
    assert df["learned gates, learned G_c test MSE"].tolist() == [r["gated-laplace"] for r in rows]
    assert df["true clusters, isotropic (x) test MSE"].tolist() == [r["oracle-laplace"] for r in rows]
    assert df["RFM oracle test MSE"].tolist() == [r["oracle-rfm"] for r in rows]
    assert df["learned gates' ARI"].tolist() == [r["gate_ari"] for r in rows]
    assert all(df[c].dtype.kind == "f" for c in df.columns if c.endswith("test MSE"))
    findings = rof.swap_findings(rows)
    assert "-> the" in findings and max(len(line) for line in findings.splitlines()) <= 80
    # the verdict follows the numbers: make the metric's gain the larger one, then the routing's
    row = dict(rows[0]) | {"gated-laplace-iso": 1.0, "gated-laplace": 0.1, "oracle-laplace": 1.0, "oracle-laplace-gc": 0.09}
    assert "the features carry more" in rof.swap_findings([row]) and "the features carry more" in rof.swap_answer([row])
    row |= {"gated-laplace-iso": 0.2, "oracle-laplace-gc": 0.01}
    assert "the routing carries more" in rof.swap_findings([row]) and "the routing carries more" in rof.swap_answer([row])
    # the CLI draws the figure from the same cells
    out = tmp_path / "swaps.png"
    assert main(["plot", "swaps", "--profile", "smoke", "--cache", str(tmp_path), "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000
