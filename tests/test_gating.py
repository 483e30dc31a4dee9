"""The MLP-gated local predictors of Section 3.3 (monosem.gating)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from monosem import data, gating


def specialized_relu_mlp(model, per_cluster: int = 3, seed: int = 0) -> SimpleNamespace:
    """A ReLU network whose neurons are exactly specialized: neuron (c, k) fires only inside
    cluster c (routing weight along s_c, threshold halfway to the nearest other center) and reads
    +-v_c there."""
    gen = torch.Generator().manual_seed(seed)
    s = model.info["centers"]
    rho = model.info["rho_K"]
    gain = 10.0
    W, b, a = [], [], []
    for c in range(model.K):
        for k in range(per_cluster):
            sign = 1.0 if k % 2 == 0 else -1.0
            w = torch.zeros(model.d, dtype=torch.float64)
            w[:10] = gain * s[c]
            w[10:] = 0.3 * sign * model.directions[c, 10:]
            W.append(w)
            b.append(-gain * (1 + rho) / 2)
            a.append(0.5 + torch.rand(1, generator=gen, dtype=torch.float64).item())
    # plus negligible neurons (tiny readout), as a trained network has many
    for _ in range(2 * per_cluster * model.K):
        W.append(torch.randn(model.d, generator=gen, dtype=torch.float64))
        b.append(0.0)
        a.append(1e-6)
    W = torch.stack(W)
    return SimpleNamespace(W=W, b=torch.tensor(b, dtype=torch.float64), a=torch.tensor(a, dtype=torch.float64),
                           output_scale=1.0, activation="relu")


def test_specialized_mlp_gates_recover_the_true_clusters():
    model = data.mixed_link_model(5)
    mlp = specialized_relu_mlp(model)
    X, y, c = model.pool(1500)
    Xt, yt, ct = model.test_set(500)
    est = gating.MLPGatedRegressor(mlp, local="laplace", n_gates=5).fit(X, y)
    assert est.active_.tolist() == list(range(15))  # exactly the specialized neurons are active
    assert est.gate_purity(X, c) > 0.99 and est.gate_purity(Xt, ct) > 0.99
    # each gate metric concentrates on its cluster's own neurons: rank-2 routing + predictive
    G = est.gate_metrics_
    assert G.shape == (5, 20, 20) and torch.allclose(G, G.transpose(1, 2))
    assert float(torch.linalg.eigvalsh(G).min()) > -1e-9
    pred = est.predict(Xt)
    assert pred.shape == (500,) and np.isfinite(pred).all()
    # gated local Laplace beats predicting the mean
    assert np.mean((pred - yt.cpu().numpy()) ** 2) < 0.8 * float(yt.double().var())


def test_active_set_two_means_and_fallback():
    m = torch.tensor([1e-8, 2e-8, 0.0, 1e-1, 2e-1, 3e-1])
    assert gating.active_neurons(m, K=2).tolist() == [3, 4, 5]
    # fewer than K survive the 2-means: keep the K largest
    assert gating.active_neurons(m, K=4).tolist() == [1, 3, 4, 5]
    with pytest.raises(ValueError, match="K"):
        gating.active_neurons(m, K=0)


def test_profiles_and_gate_metric_formulas():
    contrib = torch.tensor([[1.0, 3.0], [0.0, 0.0]], dtype=torch.float64)
    P = gating.contribution_profiles(contrib)
    assert torch.allclose(P[0], torch.tensor([0.25, 0.75], dtype=torch.float64)) and torch.all(P[1] == 0)
    W = torch.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=torch.float64)
    q = torch.tensor([[1.0, 0.0], [0.5, 0.5]], dtype=torch.float64)
    G = gating.gate_metrics(q, W)
    assert torch.allclose(G[0], torch.diag(torch.tensor([1.0, 0.0], dtype=torch.float64)))
    assert torch.allclose(G[1], torch.diag(torch.tensor([0.5, 2.0], dtype=torch.float64)))
    S = gating.psd_sqrt(G[1])
    assert torch.allclose(S @ S, G[1])


def test_bad_inputs():
    model = data.mixed_link_model(2)
    mlp = specialized_relu_mlp(model)
    X, y, _ = model.pool(50)
    with pytest.raises(ValueError, match="local"):
        gating.MLPGatedRegressor(mlp, local="svm", n_gates=2).fit(X, y)
    with pytest.raises(ValueError, match="n_gates"):
        gating.MLPGatedRegressor(mlp, n_gates=0).fit(X, y)
    gelu = SimpleNamespace(**{**vars(mlp), "activation": "gelu"})
    with pytest.raises(ValueError, match="ReLU"):
        gating.MLPGatedRegressor(gelu, n_gates=2).fit(X, y)
    with pytest.raises(ValueError, match="shape"):
        gating.MLPGatedRegressor(mlp, n_gates=2).fit(X[:, :5], y)


def test_swapped_pipelines_routing_and_features():
    """Page 09's swaps: true routing with isotropic features is the per-cluster Laplace oracle;
    true routing keeps the learned metrics of eq. 13 at the true clusters' mean profiles;
    isotropic features drop the metric and keep the learned gates."""
    from monosem.kernels import LaplaceKernelRegressor, PerClusterOracle

    model = data.mixed_link_model(5)
    mlp = specialized_relu_mlp(model)
    X, y, c = model.pool(1200)
    Xt, yt, ct = model.test_set(400)
    kw = {"bandwidth": "median", "ridge": 1e-6, "random_state": 0}
    oracle = PerClusterOracle(LaplaceKernelRegressor(**kw)).fit(X, y, groups=c)
    both = gating.MLPGatedRegressor(mlp, n_gates=5, routing="true", features="isotropic").fit(X, y, clusters=c)
    np.testing.assert_allclose(both.predict(Xt, gates=ct.cpu().numpy()), oracle.predict(Xt, groups=ct), rtol=1e-10, atol=1e-12)
    assert torch.equal(both.gate_sqrt_, torch.eye(20, dtype=torch.float64).expand(5, -1, -1))
    true_metric = gating.MLPGatedRegressor(mlp, n_gates=5, routing="true").fit(X, y, clusters=c)
    P = gating.contribution_profiles(gating.contributions(mlp, X, true_metric.active_))
    q = torch.stack([P[c.to(P.device) == k].mean(dim=0) for k in range(5)])
    torch.testing.assert_close(true_metric.gate_metrics_, gating.gate_metrics(q, mlp.W[true_metric.active_]))
    assert np.array_equal(true_metric.train_gates_, c.cpu().numpy())
    iso = gating.MLPGatedRegressor(mlp, n_gates=5, features="isotropic").fit(X, y)
    paper = gating.MLPGatedRegressor(mlp, n_gates=5).fit(X, y)
    assert np.array_equal(iso.train_gates_, paper.train_gates_)  # same gates, only the features differ
    with pytest.raises(ValueError, match="clusters"):
        gating.MLPGatedRegressor(mlp, n_gates=5, routing="true").fit(X, y)
    with pytest.raises(ValueError, match="gates="):
        true_metric.predict(Xt)
    for name, bad in (("routing", "oracle"), ("features", "none")):
        with pytest.raises(ValueError, match=name):
            gating.MLPGatedRegressor(mlp, n_gates=5, **{name: bad}).fit(X, y)
