"""Tests of monosem.kernels: the metric Laplace kernel, its solvers, AGOP, RFM and the oracles."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from monosem import data
from monosem.kernels import (
    EigenProConfig,
    LaplaceKernelRegressor,
    PerClusterOracle,
    RFMRegressor,
    agop,
    effective_rank,
    normalized_spectrum,
    subspace_capture,
    trace_share,
)
from monosem.kernels.agop import laplace_gradients, normalize_metric
from monosem.kernels.bandwidth import cluster_median_distance, median_distance
from monosem.kernels.laplace import KernelOperator, kernel_matvec, laplace_kernel, metric_sqrt
from monosem.kernels.solvers import solve_exact

F64 = torch.float64


def _random_psd(d: int, rank: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(d, rank, generator=g, dtype=F64)
    return A @ A.T


@pytest.fixture(scope="module")
def single_index():
    """K = 1 mixed-link data: a single-index model in d = 20."""
    m = data.mixed_link_model(1)
    X, y, c = m.pool(1_200, dtype=F64)
    Xt, yt, ct = m.test_set(1_024, dtype=F64)
    return m, X, y, c, Xt, yt, ct


# ------------------------------------------------------------------------------------- kernel
def test_kernel_is_symmetric_psd_and_uses_the_l2_norm():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(300, 6, generator=g, dtype=F64)
    M = _random_psd(6, 3, 1)
    Z = X @ metric_sqrt(M)
    K = laplace_kernel(Z, Z, 2.0)
    assert torch.allclose(K, K.T, atol=1e-12)
    assert torch.allclose(K.diagonal(), torch.ones(300, dtype=F64), atol=1e-7)
    assert float(torch.linalg.eigvalsh(K)[0]) > -1e-10
    # the L2 norm of M^{1/2}(x - x'), i.e. sqrt((x-x')^T M (x-x')), not an L1 norm
    diff = X[3] - X[7]
    assert float(K[3, 7]) == pytest.approx(float(torch.exp(-torch.sqrt(diff @ M @ diff) / 2.0)), rel=1e-9)


def test_blocked_evaluation_equals_unblocked():
    g = torch.Generator().manual_seed(1)
    Z1 = torch.randn(257, 5, generator=g, dtype=F64)
    Z2 = torch.randn(131, 5, generator=g, dtype=F64)
    v = torch.randn(131, generator=g, dtype=F64)
    full = laplace_kernel(Z1, Z2, 1.5) @ v
    blocked = kernel_matvec(Z1, Z2, 1.5, v, block_bytes=131 * 8 * 7)  # 7-row blocks
    assert torch.allclose(full, blocked, atol=1e-12)
    op_cached = KernelOperator(Z1, 1.5, cache_bytes=10**9)
    op_streamed = KernelOperator(Z1, 1.5, cache_bytes=0, block_bytes=257 * 8 * 10)
    w = torch.randn(257, generator=g, dtype=F64)
    assert op_streamed.cached is None and op_cached.cached is not None
    assert torch.allclose(op_cached.matvec(w), op_streamed.matvec(w), atol=1e-12)
    idx = torch.tensor([0, 5, 256])
    assert torch.allclose(op_cached.rows(idx), op_streamed.rows(idx), atol=1e-12)
    # a streamed row block is filled in 10-row chunks into a buffer reused across calls
    first = op_streamed.row_block(3, 40).clone()
    assert torch.allclose(first, op_cached.row_block(3, 40), atol=1e-12)
    assert torch.allclose(op_streamed.row_block(200, 257), op_cached.row_block(200, 257), atol=1e-12)
    assert torch.allclose(op_streamed.row_block(3, 40), first, atol=0)


# ------------------------------------------------------------------------------ gradients, AGOP
def test_closed_form_gradient_matches_autograd():
    g = torch.Generator().manual_seed(2)
    X = torch.randn(200, 5, generator=g, dtype=F64)
    y = torch.sin(X[:, 0]) + X[:, 1] ** 2
    M = _random_psd(5, 5, 3) + 0.1 * torch.eye(5, dtype=F64)
    model = LaplaceKernelRegressor(bandwidth=1.7, metric=M, solver="exact").fit(X, y)
    Xq = torch.randn(40, 5, generator=g, dtype=F64)
    closed = model.gradients(Xq).cpu()
    S = metric_sqrt(M)
    # the reference is computed on the CPU from the fitted state, wherever the model lives
    Zt = model._Z.to("cpu", F64)
    alpha = model.dual_coef_.to("cpu", F64)
    xq = Xq.clone().requires_grad_(True)
    zq = xq @ S - model._z_mean.cpu()
    f = (torch.exp(-(zq[:, None, :] - Zt[None]).norm(dim=2) / model.bandwidth_) @ alpha).sum()
    (auto,) = torch.autograd.grad(f, xq)
    assert torch.allclose(closed, auto, rtol=1e-8, atol=1e-10)
    # the fitted predictor itself agrees with the formula differentiated above
    assert np.allclose(model.predict(Xq), (torch.exp(-(zq[:, None, :] - Zt[None]).norm(dim=2) / model.bandwidth_) @ alpha).detach().numpy())


def test_agop_on_training_points_drops_each_points_own_term():
    g = torch.Generator().manual_seed(4)
    X = torch.randn(150, 4, generator=g, dtype=F64)
    y = X[:, 0] ** 2
    model = LaplaceKernelRegressor(bandwidth=2.0, solver="exact").fit(X, y)
    G = model.agop_tensor(max_samples=None)
    Z, a, h = model._Z, model.dual_coef_, model.bandwidth_
    grads = []
    for i in range(Z.shape[0]):
        keep = torch.arange(Z.shape[0]) != i
        grads.append(laplace_gradients(Z[i : i + 1], Z[keep], a[keep], h)[0])
    grads = torch.stack(grads)
    assert torch.allclose(G, grads.T @ grads / grads.shape[0], rtol=1e-9, atol=1e-12)
    assert np.allclose(agop(model, normalize="trace").trace(), 1.0)
    assert np.isclose(np.linalg.eigvalsh(agop(model, normalize="max"))[-1], 1.0)


# --------------------------------------------------------------------------------- solvers
def test_iterative_solvers_reach_the_exact_predictions():
    m = data.mixed_link_model(2)
    X, y, c = m.pool(2_000)
    Xt, _, _ = m.test_set(500)
    exact = LaplaceKernelRegressor(solver="exact").fit(X, y).predict(Xt)
    scale = np.linalg.norm(exact)
    cg = LaplaceKernelRegressor(solver="cg", target_mse=1e-6, max_iter=500, dtype="float64").fit(X, y)
    assert cg.solve_info_.converged
    assert np.linalg.norm(cg.predict(Xt) - exact) / scale < 1e-2
    ep = LaplaceKernelRegressor(solver="eigenpro", target_mse=1e-5, max_iter=300, eigenpro=EigenProConfig(subsample=1_000, top_q=100)).fit(X, y)
    assert ep.solve_info_.converged and ep.solve_info_.train_mse <= 1e-5
    assert np.linalg.norm(ep.predict(Xt) - exact) / scale < 0.05


def test_eigenpro_recovers_from_a_step_too_large(monkeypatch):
    """An underestimated lambda_{q+1} (here forced 20x too small) makes the step too large: the
    iteration diverges, the guard restores the best iterate and halves the step until it
    converges, and the reported training MSE is that of the returned coefficients."""
    import monosem.kernels.eigenpro as ep_mod

    real = ep_mod.nystrom_preconditioner

    def underestimated(op, config, seed):
        pre = real(op, config, seed)
        pre.lam_q1 /= 20.0
        return pre

    monkeypatch.setattr(ep_mod, "nystrom_preconditioner", underestimated)
    m = data.mixed_link_model(2)
    X, y, _ = m.pool(2_000, dtype=torch.float64)
    est = LaplaceKernelRegressor(solver="eigenpro", dtype="float64", target_mse=1e-3, max_iter=200,
                                 eigenpro=EigenProConfig(subsample=500, top_q=50)).fit(X, y)
    info = est.solve_info_
    assert info.details["step_halvings"] >= 1
    assert info.converged and info.train_mse <= 1e-3
    fitted = est.predict(X)
    assert float(np.mean((fitted - y.cpu().numpy()) ** 2)) == pytest.approx(info.train_mse, rel=1e-6)


@pytest.mark.parametrize("solver", ["cg", "eigenpro"])
def test_streamed_and_cached_kernels_give_the_same_iterative_fit(single_index, solver):
    _, X, y, _, Xt, _, _ = single_index
    kw = dict(solver=solver, dtype="float64", max_iter=20, eigenpro=EigenProConfig(subsample=300, top_q=50))
    cached = LaplaceKernelRegressor(**kw).fit(X[:600], y[:600])
    streamed = LaplaceKernelRegressor(cache_bytes=0, block_bytes=600 * 8 * 64, **kw).fit(X[:600], y[:600])
    assert streamed.solve_info_.iterations == cached.solve_info_.iterations
    assert np.allclose(streamed.predict(Xt), cached.predict(Xt), rtol=1e-8, atol=1e-10)


def test_auto_solver_follows_the_11000_threshold(single_index):
    _, X, y, *_ = single_index
    assert LaplaceKernelRegressor().fit(X, y).solver_ == "exact"
    small_threshold = LaplaceKernelRegressor(exact_max_n=1_000, max_iter=3).fit(X, y)
    assert small_threshold.solver_ == "eigenpro" and small_threshold.solve_info_.ridge == 0.0


def test_exact_solver_raises_the_ridge_when_cholesky_fails():
    X = torch.zeros(5, 2, dtype=F64)
    X[1:, 0] = torch.arange(1, 5, dtype=F64)
    X = torch.cat([X, X])  # every point twice: K is singular

    def build():
        return laplace_kernel(X, X, 1.0)

    with pytest.warns(RuntimeWarning, match="Cholesky failed"):
        alpha, info = solve_exact(build, torch.ones(10, dtype=F64), 0.0)
    assert info.ridge > 0 and torch.isfinite(alpha).all()


def test_mixed_precision_exact_solve_equals_the_float64_solve(single_index):
    _, X, y, *_ = single_index
    Z = X - X.mean(0)
    h = median_distance(Z)
    alphas = {}
    for precision in ("float64", "mixed"):
        alphas[precision], info = solve_exact(lambda: laplace_kernel(Z, Z, h), y, 1e-6, precision=precision)
        assert info.details["precision"] == precision
    assert info.details["refined"] and info.details["relative_residual"] <= 1e-12
    rel = float((alphas["mixed"] - alphas["float64"]).norm() / alphas["float64"].norm())
    assert rel < 1e-9
    # and the fitted predictors (at every RFM iteration, where the metric sharpens the kernel)
    _, _, _, _, Xt, yt, _ = single_index
    fits = {p: RFMRegressor(iterations=2, exact_precision=p).fit(X, y, X_test=Xt, y_test=yt) for p in ("float64", "mixed")}
    assert fits["mixed"].test_mse_ == pytest.approx(fits["float64"].test_mse_, rel=1e-7)


def test_mixed_precision_falls_back_to_float64_when_float32_cannot_factorize():
    # near-duplicated points: K + 1e-8 I is positive definite in float64, singular in float32
    g = torch.Generator().manual_seed(3)
    X = torch.randn(40, 3, generator=g, dtype=F64)
    X = torch.cat([X, X + 1e-7 * torch.randn(40, 3, generator=g, dtype=F64)])
    y = torch.sin(X[:, 0])

    def build():
        return laplace_kernel(X, X, 1.0)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the float64 factorization needs no larger ridge
        alpha, info = solve_exact(build, y, 1e-8, precision="mixed")
        ref, _ = solve_exact(build, y, 1e-8, precision="float64")
    assert info.details["refined"] is False and "float32 factorization failed" in info.details["fallback"]
    assert info.ridge == 1e-8 and torch.equal(alpha, ref)
    # points 100x further apart: float32 factorizes, and the refinement recovers the float64 solution
    X[40:] = X[:40] + 1e-5 * torch.randn(40, 3, generator=g, dtype=F64)
    alpha, info = solve_exact(build, y, 1e-8, precision="mixed")
    ref, _ = solve_exact(build, y, 1e-8, precision="float64")
    assert info.details["refined"] and float((alpha - ref).norm() / ref.norm()) < 1e-6
    with pytest.raises(ValueError, match="precision"):
        solve_exact(build, y, 1e-8, precision="float16")


# ------------------------------------------------------------------------------ bandwidth rules
def test_bandwidth_rules():
    g = torch.Generator().manual_seed(5)
    A = torch.randn(300, 3, generator=g, dtype=F64)
    B = 10.0 + 2.0 * torch.randn(300, 3, generator=g, dtype=F64)
    Z = torch.cat([A, B])
    groups = torch.cat([torch.zeros(300), torch.ones(300)]).long()
    within = cluster_median_distance(Z, groups)
    assert min(median_distance(A), median_distance(B)) <= within <= max(median_distance(A), median_distance(B))
    assert median_distance(Z) > 2 * within  # the label-free median is dominated by between-cluster pairs
    # recomputing the median in the transformed space: scaling the metric by s^2 scales h by s
    y = torch.sin(Z[:, 0])
    h1 = LaplaceKernelRegressor(metric=torch.eye(3)).fit(Z, y).bandwidth_
    h4 = LaplaceKernelRegressor(metric=4.0 * torch.eye(3)).fit(Z, y).bandwidth_
    assert h4 == pytest.approx(2.0 * h1, rel=1e-9)


# ------------------------------------------------------------------------------------- RFM
def test_rfm_finds_the_single_index_direction_and_beats_laplace(single_index):
    m, X, y, c, Xt, yt, _ = single_index
    rfm = RFMRegressor(bandwidth="cluster-median").fit(X, y, groups=c, X_test=Xt, y_test=yt)
    assert len(rfm.history_) == 4 and rfm.metric_.shape == (20, 20)
    top = np.linalg.eigh(rfm.metric_)[1][:, -1]
    assert abs(top @ m.directions[0].numpy()) > 0.9
    laplace_mse, rfm_mse = rfm.test_mse_[0], rfm.test_mse_[-1]
    assert rfm_mse < 0.5 * laplace_mse
    # iteration 0 is the isotropic Laplace kernel
    lap = LaplaceKernelRegressor(bandwidth="cluster-median").fit(X, y, groups=c)
    assert np.allclose(lap.predict(Xt), rfm.predict(Xt, iteration=0))
    assert rfm.best_iteration_ == int(np.argmin(rfm.test_mse_))


def test_agop_normalization_cancels_with_a_median_bandwidth(single_index):
    _, X, y, _, Xt, _, _ = single_index
    X, y = X[:500], y[:500]
    preds = [RFMRegressor(iterations=2, normalize=nz).fit(X, y).predict(Xt) for nz in ("max", "trace", None)]
    assert np.allclose(preds[0], preds[1], rtol=1e-6, atol=1e-8)
    assert np.allclose(preds[0], preds[2], rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="normalize"):
        normalize_metric(torch.eye(2, dtype=F64), "frobenius")


# ------------------------------------------------------------------------------------ oracles
def test_oracle_equals_the_global_fit_when_k_is_1(single_index):
    _, X, y, c, Xt, _, ct = single_index
    glob = LaplaceKernelRegressor().fit(X, y).predict(Xt)
    oracle = PerClusterOracle(LaplaceKernelRegressor()).fit(X, y, c)
    assert np.allclose(oracle.predict(Xt, ct), glob)


def test_oracle_routes_by_true_cluster():
    m = data.mixed_link_model(2)
    X, y, c = m.pool(400)
    Xt, yt, ct = m.test_set(100)
    oracle = PerClusterOracle(RFMRegressor(iterations=1, bandwidth="cluster-median")).fit(X, y, c)
    sel = (ct == 1).cpu().numpy()
    local = RFMRegressor(iterations=1, bandwidth="cluster-median").fit(X[c == 1], y[c == 1], groups=c[c == 1])
    assert np.allclose(oracle.predict(Xt, ct, iteration=1)[sel], local.predict(Xt[ct == 1], iteration=1))
    with pytest.raises(ValueError, match="no training examples"):
        oracle.predict(Xt, torch.full_like(ct, 7))


def test_oracle_checkpoints_each_cluster_and_restores_it(tmp_path, laplace_fits):
    m = data.mixed_link_model(2)
    X, y, c = m.pool(400)
    Xt, _, ct = m.test_set(100)
    rfm = RFMRegressor(iterations=1, bandwidth="median")
    whole = PerClusterOracle(rfm).fit(X, y, c, checkpoint=tmp_path / "oracle")
    files = whole.checkpoint_files(tmp_path / "oracle")
    assert [p.name for p in files] == ["oracle-0.pt", "oracle-1.pt"] and all(p.exists() for p in files)
    laplace_fits.count()
    again = PerClusterOracle(rfm).fit(X, y, c, checkpoint=tmp_path / "oracle")
    assert laplace_fits.calls == 0  # both clusters restored
    for t in range(2):
        assert np.array_equal(again.predict(Xt, ct, iteration=t), whole.predict(Xt, ct, iteration=t))
    with pytest.raises(ValueError, match="checkpoint: LaplaceKernelRegressor.fit takes no checkpoint"):
        PerClusterOracle(LaplaceKernelRegressor()).fit(X, y, c, checkpoint=tmp_path / "laplace")
    assert PerClusterOracle(rfm).checkpoint_files(tmp_path / "oracle") == []  # not fitted: none written


# ------------------------------------------------------------------------------ scikit-learn
@pytest.mark.slow
def test_scikit_learn_estimator_checks():
    from sklearn.utils.estimator_checks import check_estimator

    for est in (LaplaceKernelRegressor(), RFMRegressor(iterations=1)):
        failures = [r for r in check_estimator(est, on_fail=None) if r["status"] == "failed"]
        assert not failures, [(r["check_name"], str(r["exception"])[:200]) for r in failures]


def test_numpy_and_torch_inputs_give_the_same_fit(single_index):
    _, X, y, *_ = single_index
    a = LaplaceKernelRegressor().fit(X[:300], y[:300]).predict(X[300:400])
    b = LaplaceKernelRegressor().fit(X[:300].cpu().numpy(), y[:300].cpu().numpy()).predict(X[300:400].cpu().numpy())
    assert isinstance(a, np.ndarray) and np.allclose(a, b)
    assert LaplaceKernelRegressor(bandwidth=2.0).get_params()["bandwidth"] == 2.0


# ----------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kwargs, fit_args, match",
    [
        ({"bandwidth": 0.0}, None, "bandwidth"),
        ({"bandwidth": -1.0}, None, "bandwidth"),
        ({"bandwidth": "mean"}, None, "bandwidth"),
        ({"solver": "lu"}, None, "solver"),
        ({"ridge": -1.0}, None, "ridge"),
        ({"metric": -np.eye(3)}, None, "positive semi-definite"),
        ({"metric": np.array([[1.0, 2.0, 0], [0, 1.0, 0], [0, 0, 1.0]])}, None, "symmetric"),
        ({"metric": np.eye(4)}, None, "shape"),
        ({"bandwidth": "cluster-median"}, None, "groups"),
        ({"exact_precision": "float16"}, None, "exact_precision"),
        ({}, "nan", "NaN"),
        ({}, "shape", "shape"),
    ],
)
def test_bad_inputs_raise_clear_errors(kwargs, fit_args, match):
    g = torch.Generator().manual_seed(6)
    X = torch.randn(20, 3, generator=g, dtype=F64)
    y = X[:, 0]
    if fit_args == "nan":
        X = X.clone()
        X[3, 1] = float("nan")
    if fit_args == "shape":
        y = y[:-1]
    with pytest.raises(ValueError, match=match):
        LaplaceKernelRegressor(**kwargs).fit(X, y)


def test_predict_checks_the_number_of_features(single_index):
    _, X, y, *_ = single_index
    model = LaplaceKernelRegressor().fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:5, :10])
    with pytest.raises(ValueError, match="iteration"):
        RFMRegressor(iterations=1).fit(X[:100], y[:100]).predict(X[:5], iteration=2)


# ------------------------------------------------------------------ learned-metric summaries
def test_metric_summaries_on_exact_cases():
    d = 6
    v = np.zeros(d)
    v[4] = 1.0
    rank_one = np.outer(v, v)
    assert effective_rank(rank_one) == pytest.approx(1.0)
    assert effective_rank(np.eye(d)) == pytest.approx(d)
    assert effective_rank(np.diag([1.0, 1.0, 0, 0, 0, 0])) == pytest.approx(2.0)
    np.testing.assert_allclose(normalized_spectrum(np.diag([2.0, 4.0, 1.0, 0, 0, 0])), [1, 0.5, 0.25, 0, 0, 0])
    assert trace_share(rank_one, (3, 6)) == pytest.approx(1.0)
    assert trace_share(np.eye(d), (0, 2)) == pytest.approx(1 / 3)
    assert subspace_capture(rank_one, v[None]) == pytest.approx(1.0)
    # top eigenvector at 60 degrees from v: cos^2 = 1/4
    u = np.zeros(d)
    u[4], u[0] = 0.5, np.sqrt(3) / 2
    assert subspace_capture(np.outer(u, u), v[None]) == pytest.approx(0.25)
    # many directions in a 2-d span: the basis is rank-revealing (k = 2), rotation-invariant
    rng = np.random.default_rng(0)
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    M = Q @ np.diag([5.0, 3.0, 1e-3, 1e-3, 0, 0]) @ Q.T
    V = rng.normal(size=(7, 2)) @ Q[:, :2].T
    assert subspace_capture(M, V) == pytest.approx(1.0)
    assert subspace_capture(M, torch.as_tensor(Q[:, 2:4].T)) == pytest.approx(0.0, abs=1e-12)


def test_metric_summaries_reject_bad_input():
    with pytest.raises(ValueError, match="square"):
        effective_rank(np.ones((2, 3)))
    with pytest.raises(ValueError, match="symmetric"):
        effective_rank(np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="block"):
        trace_share(np.eye(3), (2, 5))
    with pytest.raises(ValueError, match="directions"):
        subspace_capture(np.eye(3), np.ones((2, 4)))


# ------------------------------------------------------------------------ RFM checkpoints
@pytest.mark.parametrize("solver", ["exact", "eigenpro"])
def test_rfm_resumed_from_its_checkpoint_matches_an_uninterrupted_fit(single_index, tmp_path, laplace_fits, solver):
    _, X, y, c, Xt, yt, _ = single_index
    X, y, c = X[:1000], y[:1000], c[:1000]
    params = dict(iterations=3, bandwidth="cluster-median", solver=solver, agop_samples=500)
    whole = RFMRegressor(**params).fit(X, y, groups=c, X_test=Xt, y_test=yt)
    path = tmp_path / "rfm.pt"
    laplace_fits.interrupt_at(3)  # iteration 2
    with pytest.raises(KeyboardInterrupt):
        RFMRegressor(**params).fit(X, y, groups=c, X_test=Xt, y_test=yt, checkpoint=path)
    assert len(torch.load(path, weights_only=True)["iterations"]) == 2
    laplace_fits.count()
    resumed = RFMRegressor(**params).fit(X, y, groups=c, X_test=Xt, y_test=yt, checkpoint=path)
    assert laplace_fits.calls == 2  # iterations 2 and 3 only
    assert resumed.resumed_seconds_ > 0 and whole.resumed_seconds_ == 0
    for t in range(4):
        assert np.array_equal(resumed.predict(Xt, iteration=t), whole.predict(Xt, iteration=t))
    assert resumed.test_mse_ == whole.test_mse_ and resumed.best_iteration_ == whole.best_iteration_
    skip = {"fit_seconds", "agop_seconds", "metric"}
    for a, b in zip(resumed.history_, whole.history_):
        assert {k: v for k, v in a.items() if k not in skip} == {k: v for k, v in b.items() if k not in skip}
        assert np.array_equal(a["metric"], b["metric"])


def test_rfm_checkpoint_of_other_data_is_refused_and_a_damaged_one_moved_aside(single_index, tmp_path):
    _, X, y, c, Xt, yt, _ = single_index
    path = tmp_path / "rfm.pt"
    RFMRegressor(iterations=1).fit(X[:300], y[:300], checkpoint=path)
    with pytest.raises(ValueError, match="other parameters or data"):
        RFMRegressor(iterations=1).fit(X[:300], y[:300] + 1.0, checkpoint=path)
    with pytest.raises(ValueError, match="other parameters or data"):
        RFMRegressor(iterations=2).fit(X[:300], y[:300], checkpoint=path)
    path.write_bytes(b"not a checkpoint")
    with pytest.warns(RuntimeWarning, match="rfm.pt is damaged"):
        est = RFMRegressor(iterations=1).fit(X[:300], y[:300], checkpoint=path)
    assert (tmp_path / "rfm.pt.corrupt").exists() and est.n_iter_ == 2


def test_laplace_restored_from_its_state_predicts_the_same(single_index):
    _, X, y, c, Xt, yt, _ = single_index
    M = _random_psd(X.shape[1], 3, 0)
    est = LaplaceKernelRegressor(metric=M, solver="eigenpro").fit(X[:800], y[:800])
    back = LaplaceKernelRegressor(metric=M, solver="eigenpro").restore(X[:800], est.fitted_state())
    assert np.array_equal(back.predict(Xt), est.predict(Xt))
    assert back.solve_info_.iterations == est.solve_info_.iterations and back.bandwidth_ == est.bandwidth_
    with pytest.raises(ValueError, match="dual_coef"):
        LaplaceKernelRegressor(metric=M).restore(X[:700], est.fitted_state())
