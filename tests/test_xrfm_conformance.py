"""The package's Laplace kernel ridge regression and RFM against xrfm, the RFM authors' library.

On 1 000 training points of the mixed-link model (K = 10), both are run at the same settings: the
L2 Laplace kernel exp(-||M^{1/2}(x - x')|| / h), ridge 1e-6 solved exactly (a Cholesky
factorization), the next metric M = the AGOP of the gradients with respect to x (xrfm's
``agop_power`` is fixed at 1/2 whatever is passed: its kernel uses M^{1/2}, as this package's
does), on every training point, no gradient centring, iterations 0-3. Their predictions on 500
test points agree to :data:`PRED_ATOL` at every iteration.

What cannot be matched, and what the tests compare instead:

* AGOP normalization: xrfm divides the AGOP by its largest entry, this package by its largest
  eigenvalue (``normalize="max"``; ``"trace"`` and ``None`` are the other choices, none is the
  largest entry). Under a fixed bandwidth the scale of M changes the kernel, so iterations >= 1
  differ: the fixed-bandwidth test runs the package's building blocks (its Laplace regressor and
  its unnormalized :func:`~monosem.kernels.agop`) with xrfm's normalization, and checks that
  ``RFMRegressor`` itself gives xrfm's metric up to scale at iteration 1 (and different
  predictions). Under the median bandwidth rule the scale cancels, and ``RFMRegressor`` matches
  xrfm's adaptive bandwidth at every iteration.
* The median bandwidth: the package takes the median over a seeded subsample of 2 000 points,
  xrfm over up to 5 000 points of its training kernel, drawn from torch's global generator. At
  n <= 2 000 both use every pair and agree exactly (as here); above, h differs by a fraction of a
  percent and the predictions by more than the tolerance.
* xrfm adds 1e-8 to M's diagonal before its square root; its AGOP sums the gradients' outer
  products where the package averages them (a scale, removed by either normalization); it drops
  kernel terms at distance < 1e-10, the package each training point's own term (the same terms).
* The AGOP's sample above 20 000 training points: xrfm's first points, the package's a seeded
  random subset (not reached here).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

xrfm = pytest.importorskip("xrfm", reason="xrfm (the RFM authors' library) is not installed: pip install monosem[peers]")

from monosem import data  # noqa: E402
from monosem.kernels import LaplaceKernelRegressor, PerClusterOracle, RFMRegressor, agop  # noqa: E402
from monosem.kernels.peers import XRFMOracle, import_xrfm, xrfm_oracle, xrfm_rfm  # noqa: E402

#: Both libraries solve (K + 1e-6 I) alpha = y in float64; its condition number (about 1e9 here)
#: turns their differently rounded kernel matrices into prediction differences of about 1e-7
#: (predictions are O(1)): 1e-5 leaves a factor 40, far below the iterations' own differences.
PRED_ATOL = 1e-5
#: The metrics (each scaled to largest eigenvalue 1) differ by about 2e-8 entrywise: rounding.
METRIC_ATOL = 1e-6
#: A test MSE of O(0.1) moves by at most about 2 |error| PRED_ATOL under PRED_ATOL.
MSE_RTOL = 1e-4
#: the fixed bandwidth (about the median pairwise distance of the training inputs, 4.6)
H = 4.0
RIDGE = 1e-6
N, N_TEST, K = 1_000, 500, 10


@pytest.fixture(scope="module")
def sets():
    model = data.mixed_link_model(K)
    X, y, c = model.pool(N, dtype=torch.float64)
    Xt, yt, ct = model.test_set(N_TEST, dtype=torch.float64)
    return X, y, c, Xt, yt, ct


def _xrfm_fit(X, y, Xt, yt, iters: int, bandwidth: float | None):
    """xrfm's RFM with ``iters`` AGOP updates, at the settings above; ``bandwidth=None``: adaptive
    (the median)."""
    model = xrfm.RFM(kernel="laplace", iters=iters, bandwidth=1.0 if bandwidth is None else bandwidth, exponent=1.0,
                     bandwidth_mode="adaptive" if bandwidth is None else "constant", device="cpu", verbose=False, solver="cholesky")
    model.fit((X, y), (Xt, yt), iters=iters, method="lstsq", reg=RIDGE, return_best_params=False, early_stop_rfm=False,
              total_points_to_sample=X.shape[0], M_batch_size=X.shape[0], solver="cholesky")
    return model


def _pred(model, Xt) -> np.ndarray:
    return model.predict(Xt).reshape(-1).to(torch.float64).numpy()


def _unit(M) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    return M / np.linalg.eigvalsh(M)[-1]


@pytest.mark.parametrize("precision", ["mixed", "float64"])
def test_laplace_kernel_ridge_regression_matches_xrfm(sets, precision):
    X, y, _, Xt, yt, _ = sets
    ours = LaplaceKernelRegressor(bandwidth=H, ridge=RIDGE, solver="exact", exact_precision=precision).fit(X, y)
    theirs = _xrfm_fit(X, y, Xt, yt, 0, H)
    assert theirs.M is None  # iteration 0: the isotropic kernel
    np.testing.assert_allclose(ours.predict(Xt), _pred(theirs, Xt), rtol=0, atol=PRED_ATOL)


def test_rfm_iterations_match_xrfm_at_a_fixed_bandwidth_with_its_normalization(sets):
    """Iterations 0-3 of xrfm at a fixed bandwidth, from the package's regressor and AGOP with the
    AGOP divided by its largest entry (xrfm's normalization)."""
    X, y, _, Xt, yt, _ = sets
    metric = None
    for t in range(4):
        ours = LaplaceKernelRegressor(bandwidth=H, metric=metric, ridge=RIDGE, solver="exact").fit(X, y)
        theirs = _xrfm_fit(X, y, Xt, yt, t, H)
        np.testing.assert_allclose(ours.predict(Xt), _pred(theirs, Xt), rtol=0, atol=PRED_ATOL, err_msg=f"iteration {t}")
        if t > 0:
            np.testing.assert_allclose(_unit(metric), _unit(theirs.M), rtol=0, atol=METRIC_ATOL, err_msg=f"metric of iteration {t}")
        G = agop(ours, normalize=None)
        metric = G / G.max()


def test_rfm_regressor_at_a_fixed_bandwidth_differs_from_xrfm_only_by_the_metrics_scale(sets):
    """The one unmatched setting: RFMRegressor scales the AGOP to largest eigenvalue 1. Its
    iteration-1 metric is xrfm's up to that scale, and its predictions differ from xrfm's."""
    X, y, _, Xt, yt, _ = sets
    ours = RFMRegressor(iterations=1, bandwidth=H, ridge=RIDGE, solver="exact").fit(X, y)
    theirs = _xrfm_fit(X, y, Xt, yt, 1, H)
    np.testing.assert_allclose(ours.metric_, _unit(theirs.M), rtol=0, atol=METRIC_ATOL)
    assert np.abs(ours.predict(Xt) - _pred(theirs, Xt)).max() > 100 * PRED_ATOL


def test_rfm_with_the_median_bandwidth_matches_xrfm_at_every_iteration(sets):
    """The package's default (and the oracles' rule): the median bandwidth, recomputed after
    every update, against xrfm's adaptive bandwidth. The metrics' scales differ (largest
    eigenvalue vs largest entry) and the bandwidths with them, by the square root of that
    ratio, and the kernels are the same."""
    X, y, _, Xt, yt, _ = sets
    ours = RFMRegressor(iterations=3, bandwidth="median", ridge=RIDGE, solver="exact").fit(X, y)
    for t in range(4):
        theirs = _xrfm_fit(X, y, Xt, yt, t, None)
        np.testing.assert_allclose(ours.predict(Xt, iteration=t), _pred(theirs, Xt), rtol=0, atol=PRED_ATOL, err_msg=f"iteration {t}")
        h_ours, h_theirs = ours.history_[t]["bandwidth"], theirs.kernel_obj.bandwidth
        if t == 0:
            assert h_theirs == pytest.approx(h_ours, rel=1e-12)
        else:
            M_ours, M_theirs = ours.history_[t]["metric"], theirs.M.to(torch.float64).numpy()
            np.testing.assert_allclose(M_ours, _unit(M_theirs), rtol=0, atol=METRIC_ATOL, err_msg=f"metric of iteration {t}")
            # M_theirs = c M_ours with c = 1 / (largest entry of M_ours): distances, hence h, scale by sqrt(c)
            c = 1.0 / M_ours.max()
            assert h_theirs / h_ours == pytest.approx(np.sqrt(c), rel=1e-6)


def test_xrfm_rfm_records_the_test_mse_of_every_iteration(sets):
    X, y, _, Xt, yt, _ = sets
    model, mse, seconds = xrfm_rfm(X, y, Xt, yt, iterations=3)
    ours = RFMRegressor(iterations=3, bandwidth="median", ridge=RIDGE, solver="exact").fit(X, y, X_test=Xt, y_test=yt)
    assert len(mse) == 4 and seconds > 0
    np.testing.assert_allclose(mse, ours.test_mse_, rtol=MSE_RTOL)
    # the model returned is the last iteration's
    assert float(((torch.from_numpy(_pred(model, Xt)) - yt) ** 2).mean()) == pytest.approx(mse[-1], rel=1e-12)
    # a fixed bandwidth and no update: iteration 0 at that bandwidth
    _, mse0, _ = xrfm_rfm(X, y, Xt, yt, iterations=0, bandwidth=H)
    ridge = LaplaceKernelRegressor(bandwidth=H, ridge=RIDGE, solver="exact").fit(X, y)
    assert mse0[0] == pytest.approx(float(((torch.from_numpy(ridge.predict(Xt)) - yt) ** 2).mean()), rel=MSE_RTOL)


def test_xrfm_oracle_matches_the_packages_per_cluster_oracle(sets):
    """xrfm per cluster (100 training points each), pooled over the test set, against
    :class:`~monosem.kernels.PerClusterOracle` of the package's RFM (method ``oracle-rfm``)."""
    X, y, c, Xt, yt, ct = sets
    theirs = xrfm_oracle(X, y, c, Xt, yt, ct, iterations=3)
    assert isinstance(theirs, XRFMOracle) and theirs.test_mse.shape == (K, 4)
    assert theirs.n_train.sum() == N and theirs.n_test.sum() == N_TEST and (theirs.seconds > 0).all()
    ours = PerClusterOracle(RFMRegressor(iterations=3, bandwidth="median", ridge=RIDGE, solver="exact")).fit(X, y, groups=c)
    pooled = [float(((torch.from_numpy(ours.predict(Xt, groups=ct, iteration=t)) - yt) ** 2).mean()) for t in range(4)]
    np.testing.assert_allclose(theirs.pooled_test_mse(), pooled, rtol=MSE_RTOL)
    for row, k in enumerate(theirs.clusters.tolist()):
        sel = (ct == k).numpy()
        mse_k = float(np.mean((ours.estimators_[k].predict(Xt[sel], iteration=3) - yt[sel].numpy()) ** 2))
        assert theirs.test_mse[row, 3] == pytest.approx(mse_k, rel=MSE_RTOL)
    with pytest.raises(ValueError, match="no training examples"):
        xrfm_oracle(X[c != 0], y[c != 0], c[c != 0], Xt, yt, ct)


def test_a_missing_xrfm_names_the_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "xrfm", None)  # import xrfm raises ImportError
    with pytest.raises(ImportError, match=r"pip install monosem\[peers\]"):
        import_xrfm()
