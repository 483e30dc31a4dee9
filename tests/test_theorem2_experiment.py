"""The Theorem 2 separation experiment: the constrained MLP and the runner, at toy sizes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from monosem import data
from monosem.experiments.questions import theorem2_estimators as E
from monosem.experiments.questions import theorem2_separation as X
from monosem.profiles import Theorem2Sizes, get_profile
from monosem.tables import THIN


def test_frobenius_mlp_respects_budget_and_learns():
    K = 2
    x, y, _ = data.noiseless_routing_mixture(K).pool(200)
    cfg = E.FrobeniusMLPConfig(steps=300, budget_factor=3.0)
    net, info = E.fit_frobenius_mlp(x, y, K, cfg, seed=0)
    assert info["frobenius_sq"] <= 3.0 * K * (1 + 1e-6) and info["budget"] == 3.0 * K
    assert info["train_mse"] < 0.5 * float(y.var())  # learns something
    pred = net.predict(x)
    assert float(pred.min()) >= 0.0 and float(pred.max()) <= 1.0
    assert info["train_mse_clipped"] <= info["train_mse"] + 1e-7  # clipping never hurts: f* in [0, 1]
    # deterministic in the seed
    net2, _ = E.fit_frobenius_mlp(x, y, K, cfg, seed=0)
    torch.testing.assert_close(net.W, net2.W)


def test_projection_is_a_rescaling():
    net = E.FrobeniusMLP(4, 8, init_std=5.0, seed=1)
    W0, a0 = net.W.detach().clone(), net.a.detach().clone()
    net.project_(1.0)
    assert net.frobenius_sq() == pytest.approx(1.0)
    s = float(net.a.detach()[0] / a0[0])
    torch.testing.assert_close(net.W.detach(), W0 * s)


def test_sample_sizes_are_polynomial_and_capped():
    sizes = Theorem2Sizes(Ks=(2, 4), exponents=(1.0, 2.0, 3.0), n_test=64, n_max=100, n_scale=4.0)
    assert X.sample_sizes(2, sizes) == [(1.0, 8), (2.0, 16), (3.0, 32)]
    assert X.sample_sizes(4, sizes) == [(1.0, 16), (2.0, 64)]


def test_run_separation_smoke():
    sizes = Theorem2Sizes(Ks=(2,), exponents=(2.0,), n_test=128, n_max=100, mlp_steps=50, rfm_iterations=1)
    res = X.run_separation(sizes, seed=0)
    names = {r["method"] for r in res.rows}
    assert names == {"mlp_B3K", "mlp_B6K", "laplace", "rfm_true_agop", "rfm_empirical"}
    for r in res.rows:
        assert math.isfinite(r["test_mse"]) and r["test_mse"] >= 0 and r["n"] == 16
    # clipped predictions in [0,1] against targets in [0,1]: error at most 1
    assert all(r["test_mse"] <= 1.0 for r in res.rows if r["method"].startswith("mlp"))
    assert "laplace" in res.frame().columns
    Ks, errs = res.series("laplace", 2.0)
    assert Ks.tolist() == [2] and np.all(errs > 0)


def test_rho_zero_respects_lemma12_floor():
    """With rho = 0 the AGOP kernel only sees the predictive block: its risk >= (1 - 1/K) Var g."""
    from monosem.theory import agop_bayes_lower_bound

    (row,) = X.rho_sweep(4, 200, (0.0,), n_test=2000, seed=0)
    # Monte-Carlo test error on 2000 points: allow a few standard errors (~0.005)
    assert row["test_mse"] > agop_bayes_lower_bound(4) - 0.02


def test_bad_arguments():
    with pytest.raises(ValueError):
        E.FrobeniusMLPConfig(steps=0)
    with pytest.raises(ValueError):
        E.FrobeniusMLPConfig(lr=-1.0)
    x, y, _ = data.noiseless_routing_mixture(2).pool(10)
    with pytest.raises(ValueError):
        E.fit_and_score("svm", x, y, x, y, 2)
    with pytest.raises(ValueError):
        X.run_separation(get_profile("smoke").theorem2, methods=("nope",))


def test_separation_findings_quote_the_result():
    from monosem.experiments.questions.theorem2_separation import SeparationResult, separation_claims, separation_findings

    rows = []
    for K, A, n, lap, mlp in ((2, 2.0, 16, 0.05, 0.04), (4, 2.0, 64, 0.09, 0.03), (2, 1.0, 8, 0.07, 0.08), (4, 1.0, 16, 0.12, 0.10)):
        rows.append({"method": "laplace", "K": K, "A": A, "n": n, "test_mse": lap})
        rows.append({"method": "mlp_B3K", "K": K, "A": A, "n": n, "test_mse": mlp, "train_mse_clipped": 0.01})
    found = separation_findings(SeparationResult(rows=rows))
    assert found["grow"].startswith("at A = 2, Laplace's error is 0.05, 0.09 for K = 2, 4")
    assert found["direction"] == "Laplace's error grows with K at 2 of 2 exponents, and the best MLP's error falls with n at 2 of 2 K"
    assert found["direction_holds"] == "yes"
    from monosem.profiles import get_profile

    (claim,) = separation_claims(found, "08_theorem2_separation", "smoke", get_profile("smoke").theorem2)
    assert claim.label == "indicated (1 run)" and claim.runs == 1 and claim.n.endswith("K ≤ 4 (each point one run)")
    rows[1]["test_mse"] = 0.2  # the MLP at K = 2 now gets worse with n
    assert separation_findings(SeparationResult(rows=rows))["direction_holds"] == "partly"


def test_the_experiment_is_cells_of_the_result_store(tmp_path):
    """Each (K, n, estimator) is a cached cell: a second run computes nothing and gives the same
    table; the key names the data kind and the estimator's own settings."""
    from monosem.experiments.cache import ResultCache
    from monosem.experiments.sweeps import sweep

    sizes = Theorem2Sizes(Ks=(2,), exponents=(2.0,), n_test=128, n_max=100, mlp_steps=50, rfm_iterations=1)
    cache = ResultCache(tmp_path)
    first = X.run_separation(sizes, seed=0, cache=cache)
    files = sorted(tmp_path.rglob("*.json"))
    assert len(files) == 5  # two budgets, three kernels
    again = X.run_separation(sizes, seed=0, cache=cache)
    assert again.rows == first.rows and sorted(tmp_path.rglob("*.json")) == files
    uncached = X.run_separation(sizes, seed=0)
    assert [r["test_mse"] for r in uncached.rows] == [r["test_mse"] for r in first.rows]
    job = X.separation_jobs(sizes)[0]
    assert job.config()["data"] == {"kind": "RoutingData", "K": 2, "n": 16, "run": 0, "n_test": 128}
    assert job.config()["spec"]["kind"] == "FrobeniusMLPConfig"
    # the figure at a profile is the same cells, declared once
    smoke = get_profile("smoke")
    assert sweep("theorem2", smoke) == X.separation_jobs(smoke.theorem2, profile="smoke")
    assert {j.method for j in sweep("theorem2", smoke, methods=["t2-laplace"])} == {"t2-laplace"}
    rows = X.theorem2_rows({j: {"metrics": first_m} for j, first_m in zip(X.separation_jobs(sizes), [r for r in first.rows])})
    assert [r["method"] for r in rows] == ["mlp_B3K", "mlp_B6K", "laplace", "rfm_true_agop", "rfm_empirical"]


def test_the_pages_grid_text_and_rho_table():
    sizes = get_profile("smoke").theorem2
    text = X.sizes_text(sizes, reduced_scale=True)
    assert text.startswith(f"K in {sizes.Ks}") and text.endswith(f"K up to 32 and n up to 200{THIN}000")
    assert "reduced scale" not in X.sizes_text(sizes, reduced_scale=False)
    frame = X.rho_frame([{"rho_ratio": 0.0, "rho": 0.0, "test_mse": 0.2, "K": 4}, {"rho_ratio": 1.0, "rho": 0.1, "test_mse": 0.1, "K": 4}])
    assert list(frame.columns) == ["ρ", "test MSE"] and frame.index.name == "ρ / (α/K)" and frame["test MSE"].tolist() == [0.2, 0.1]
