"""Section 3.2's tables: EigenPro solves and stopping."""

from __future__ import annotations

import pytest
from _toy_jobs import cell


def test_eigenpro_solves_are_listed_from_the_cells_that_ran_it():
    import pandas as pd

    from monosem.experiments.questions.sample_efficiency import eigenpro_solves, eigenpro_solves_frame

    ep = {"solver": "eigenpro", "iterations": 129, "train_mse": 3.96e-4, "converged": True, "step_halvings": 4}
    exact = {"solver": "exact", "iterations": 1, "train_mse": 1e-9, "converged": True, "step_halvings": 0}
    records = {
        cell("laplace", 2, 20_000, 0): {"metrics": {"solve": ep}},
        cell("rfm", 2, 20_000, 0): {"metrics": {"solves": [ep, dict(ep, converged=False)]}},
        cell("laplace", 2, 5_000, 0): {"metrics": {"solve": exact}},
        cell("mlp-relu", 2, 20_000, 0): {"metrics": {"test_mse": 1.0}},
        # per-cluster fits: an oracle's Laplace solves, a gated RFM's iterations (gate 1 empty)
        cell("oracle-laplace", 2, 20_000, 0): {"metrics": {"local_solves": [exact, ep]}},
        cell("gated-rfm", 2, 20_000, 0): {"metrics": {"local_solves": [[ep, exact], None]}},
    }
    rows = eigenpro_solves(records)
    assert [(r["method"], r["cluster"], r["iteration"], r["converged"]) for r in rows] == [
        ("gated-rfm", 0, 0, True), ("laplace", None, None, True), ("oracle-laplace", 1, None, True),
        ("rfm", None, 0, True), ("rfm", None, 1, False)]
    frame = eigenpro_solves_frame(rows)
    assert len(frame) == 5 and frame["epochs"].tolist() == [129] * 5 and frame["step halvings"].tolist() == [4] * 5
    assert frame["reached the target"].tolist() == [True, True, True, True, False]
    assert frame["training MSE"].tolist() == [3.96e-4] * 5
    assert frame["cluster"].tolist() == [0, pd.NA, 1, pd.NA, pd.NA] and frame["iteration"].tolist() == [0, pd.NA, pd.NA, 0, 1]
    empty = eigenpro_solves_frame([])
    assert empty.empty and list(empty.columns) == list(frame.columns)


def test_stopping_frame_gives_the_training_mse_in_units_of_the_target():
    from monosem.experiments.questions.sample_efficiency import stopping_frame, stopping_summary


    # a real MLP cell's settings, with the three the table reads changed
    changes = {"width": 64, "max_steps": 1000, "target_mse": 4e-4}
    records = {
        cell("mlp-relu", 2, 500, 0, "smoke", **changes): {"metrics": {"train_mse": 2e-3, "test_mse": 0.1, "stop_step": 1000,
                                                                         "stop_reason": "cap"}},
        cell("mlp-relu", 2, 500, 1, "smoke", **changes): {"metrics": {"train_mse": 3e-4, "test_mse": 0.1, "stop_step": 400}},
        cell("rfm", 2, 500, 0, "smoke"): {"metrics": {"test_mse": 0.2}},
    }
    frame = stopping_frame(stopping_summary(records))
    assert frame["run"].tolist() == [0, 1] and frame["width"].tolist() == [64, 64]
    assert frame["training MSE"].tolist() == [2e-3, 3e-4]
    assert frame["training MSE / target"].tolist() == pytest.approx([5.0, 0.75])
    assert frame["stopped at (updates)"].tolist() == [1000, 400] and frame["stop reason"].tolist() == ["cap", "?"]
    empty = stopping_frame([])
    assert empty.empty and list(empty.columns) == list(frame.columns)
