"""Export: every cell of a figure as CSV or JSON."""

from __future__ import annotations

import json

import pytest
from monosem.__main__ import main
from monosem.experiments.sweeps import figure_of


def test_export_writes_every_cell_as_csv_and_json(tmp_path, capsys):
    import csv as csv_mod

    args = ["--profile", "smoke", "--cache", str(tmp_path), "--methods", "bayes", "--K", "10"]
    assert main(["run", "fig2", *args]) == 0
    capsys.readouterr()
    assert main(["export", "fig2", *args, "--format", "csv"]) == 0
    rows = list(csv_mod.DictReader(capsys.readouterr().out.splitlines()))
    assert [(r["method"], r["K"], r["n"]) for r in rows] == [("bayes", "10", "500"), ("bayes", "10", "1000")]
    assert all(float(r["test_mse"]) > 0 and len(r["key"]) == 16 for r in rows)
    out = tmp_path / "fig2.json"
    assert main(["export", "fig2", *args, "--format", "json", "--out", str(out)]) == 0
    assert [r["test_mse"] for r in json.loads(out.read_text())] == [float(r["test_mse"]) for r in rows]


def test_export_of_the_recorded_long_run(capsys):
    assert main(["export", "regime", "--profile", "long", "--recorded", "--format", "json"]) == 0

    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["method"] for r in rows} <= {"mlp-relu", "mlp-reglu", "rfm", "oracle-laplace", "oracle-rfm", "bayes"}
    assert all(r["stop_reason"] in ("target", "plateau", "cap", "diverged") for r in rows if r["method"].startswith("mlp-"))


def test_export_writes_every_figure_at_the_smoke_profile(tmp_path, capsys, monkeypatch):
    """Figures 2, 4 and 6 from the cache, Figure 1 and Theorem 2 computed, Theorem 1 from the
    record page 07 leaves in the cache (here: the recorded paper run copied there) or --recorded."""
    import csv as csv_mod


    monkeypatch.setenv("TQDM_DISABLE", "1")
    cache = ["--cache", str(tmp_path)]
    for fig, n in (("fig2", 500), ("fig6", 500), ("fig4", 1000)):
        args = ["--profile", "smoke", *cache, "--K", "10", "--n", str(n)]
        assert main(["run", fig, *args]) == 0
        capsys.readouterr()
        assert main(["export", fig, *args]) == 0
        rows = list(csv_mod.DictReader(capsys.readouterr().out.splitlines()))
        assert {r["method"] for r in rows} == set(figure_of(fig).methods), fig
    # Figure 1's table is a cell like any other: run, then export
    assert main(["run", "fig1", "--profile", "smoke", *cache]) == 0
    capsys.readouterr()
    assert main(["export", "fig1", "--profile", "smoke", "--format", "json", *cache]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["branch"] for r in rows} == {"relu", "gelu", "reglu gate", "reglu value", "swiglu gate", "swiglu value"}
    assert all(0 <= r["frac_A071"] <= 1 and r["test_mse"] > 0 for r in rows)
    # Section 4.2's experiment is a figure of cells like any other: run, then export
    assert main(["run", "theorem2", "--profile", "smoke", *cache]) == 0
    capsys.readouterr()
    assert main(["plot", "theorem2", "--profile", "smoke", *cache, "--out", str(tmp_path / "t2.png")]) == 0
    assert (tmp_path / "t2.png").stat().st_size > 0
    capsys.readouterr()
    with pytest.raises(SystemExit):  # drawn by its page: a one-line error naming the export
        main(["plot", "fig1", "--profile", "smoke", *cache])
    assert "monosem export fig1" in capsys.readouterr().err
    assert main(["export", "theorem2", "--profile", "smoke", *cache]) == 0
    rows = list(csv_mod.DictReader(capsys.readouterr().out.splitlines()))
    assert {"mlp_B3K", "laplace", "rfm_true_agop", "rfm_empirical"} <= {r["method"] for r in rows}
    assert all(float(r["test_mse"]) >= 0 and r["key"] for r in rows) and {r["figure"] for r in rows} == {"theorem2"}
    # no cached cell yet: a clear error saying what to run
    assert main(["export", "theorem1", "--profile", "smoke", *cache]) == 1
    assert "monosem run theorem1" in capsys.readouterr().err
    assert main(["export", "theorem1", "--profile", "paper", "--recorded", "--format", "json"]) == 0
    recorded = json.loads(capsys.readouterr().out)
    assert {r["section"] for r in recorded} == {"flows", "coverage", "tracking", "full_network", "perturbation"}

