"""The RFM authors' own library, xrfm, run at this package's settings: an optional peer.

xrfm (``pip install monosem[peers]``) is never needed by the package; this module imports it only
when called. :func:`xrfm_rfm` fits one xrfm RFM and records its test MSE at every iteration;
:func:`xrfm_oracle` does so once per true cluster, the per-cluster oracle of Appendix A.2
(``oracle-rfm``) fitted by xrfm, to set beside :class:`~monosem.kernels.PerClusterOracle`.

Settings are mapped to xrfm's API as closely as it allows (``tests/test_xrfm_conformance.py``
checks the agreement): the L2 Laplace kernel exp(-||M^{1/2}(x - x')|| / h); ``bandwidth="median"``
is xrfm's adaptive bandwidth (``bandwidth=1, bandwidth_mode="adaptive"``: the median pairwise
distance, recomputed after every update), a number is a fixed bandwidth; the ridge; the next
metric from the AGOP of gradients with respect to x on the first ``agop_samples`` training
points; no gradient centring; the last iteration kept (no early stopping, no choice of the best
iteration on the test data). What differs (the conformance test's docstring): xrfm normalizes the
AGOP by its largest entry (this package: its largest eigenvalue), which changes a fit only under
a fixed bandwidth; its median uses up to 5 000 points (this package: 2 000), and the AGOP's
first points rather than a seeded random subset (the same points up to 2 000 and 20 000
training points respectively).
"""

from __future__ import annotations

import contextlib
import io
import time
from dataclasses import dataclass

import numpy as np
import torch

from ..checks import check_int
from .agop import AGOP_MAX_SAMPLES
from .inputs import as_groups, as_matrix, as_vector, check_positive

__all__ = ["XRFMOracle", "import_xrfm", "xrfm_rfm", "xrfm_oracle", "INSTALL_HINT"]

INSTALL_HINT = "pip install monosem[peers]"
#: rows of one AGOP batch in xrfm (its AGOP holds a batch x n distance matrix and two copies)
_AGOP_BATCH = 2_000


def import_xrfm():
    """The ``xrfm`` module, or an ImportError that says how to install it."""
    try:
        import xrfm
    except ImportError as err:
        raise ImportError(f"monosem.kernels.peers runs the RFM authors' library xrfm, which is not installed: {INSTALL_HINT}") from err
    return xrfm


def _recording_rfm(xrfm):
    class RecordingRFM(xrfm.RFM):
        """xrfm's RFM, recording the test MSE of every iteration's predictor: xrfm scores each
        iteration's fit once, right after it (``score``), before the next metric update."""

        probe: tuple[torch.Tensor, torch.Tensor] | None = None

        def score(self, samples, targets, metrics):
            out = super().score(samples, targets, metrics)
            if self.probe is not None:
                Xp, yp = self.probe
                pred = self.predict(Xp).reshape(-1).to(torch.float64)
                self.test_mse_.append(float((pred - yp).square().mean()))
            return out

    return RecordingRFM


def _bandwidth(bandwidth) -> tuple[float, str]:
    """xrfm's ``(bandwidth, bandwidth_mode)`` for ``"median"`` (its adaptive rule) or a number."""
    if isinstance(bandwidth, str):
        if bandwidth != "median":
            raise ValueError(f"bandwidth={bandwidth!r}: xrfm offers the median rule ('median') or a fixed positive number")
        return 1.0, "adaptive"
    return check_positive(bandwidth, "bandwidth"), "constant"


def xrfm_rfm(
    X, y, X_test, y_test, *,
    iterations: int = 3,
    bandwidth="median",
    ridge: float = 1e-6,
    agop_samples: int = AGOP_MAX_SAMPLES,
    method: str = "lstsq",
    validation=None,
    dtype: torch.dtype = torch.float64,
    seed: int = 0,
    quiet: bool = True,
):
    """Fit xrfm's RFM with ``iterations`` AGOP updates (fits at iterations 0..T) on ``(X, y)``.

    Returns ``(model, test_mse, seconds)``: the fitted ``xrfm.RFM`` (its last iteration), the
    test MSE of iterations 0..T on ``(X_test, y_test)`` and the wall time of the fit (scoring
    included). ``method``: xrfm's ``"lstsq"`` (a Cholesky solve of the ridge system, like this
    package's exact solver) or ``"eigenpro"`` (no ridge; xrfm stops its epochs early on
    ``validation = (X_val, y_val)``, which should then be held out from the test set; without it
    the test set is passed, which only the ``"eigenpro"`` method would look at). ``dtype``: xrfm
    computes in its inputs' precision. ``seed`` seeds torch's global generator for the fit (xrfm
    draws its median's subsample from it) and is restored after it. ``quiet`` silences xrfm's
    printing.
    """
    xrfm = import_xrfm()
    iterations = check_int(iterations, "iterations", 0)
    agop_samples = check_int(agop_samples, "agop_samples")
    if method not in ("lstsq", "eigenpro"):
        raise ValueError(f"method={method!r} is not allowed; use 'lstsq' or 'eigenpro'")
    h, mode = _bandwidth(bandwidth)
    cpu = torch.device("cpu")
    X = as_matrix(X, "X", cpu, dtype)
    n = X.shape[0]
    y = as_vector(y, "y", n, cpu, dtype)
    Xt = as_matrix(X_test, "X_test", cpu, dtype, X.shape[1])
    yt = as_vector(y_test, "y_test", Xt.shape[0], cpu, torch.float64)
    if validation is None:
        Xv, yv = Xt, yt.to(dtype)
    else:
        Xv = as_matrix(validation[0], "validation X", cpu, dtype, X.shape[1])
        yv = as_vector(validation[1], "validation y", Xv.shape[0], cpu, dtype)
    model = _recording_rfm(xrfm)(kernel="laplace", iters=iterations, bandwidth=h, exponent=1.0, bandwidth_mode=mode,
                                 device=cpu, verbose=False, tuning_metric="mse", solver="cholesky")
    model.probe, model.test_mse_ = (Xt, yt), []
    # the AGOP on the first min(n, agop_samples) points, in batches of at most _AGOP_BATCH rows:
    # xrfm takes the first 1 + total_points_to_sample // M_batch_size batches
    batch = min(n, agop_samples, _AGOP_BATCH)
    out = io.StringIO()
    with torch.random.fork_rng(devices=[]), contextlib.redirect_stdout(out) if quiet else contextlib.nullcontext():
        torch.manual_seed(seed)
        t0 = time.perf_counter()
        model.fit((X, y), (Xv, yv), iters=iterations, method=method, reg=float(ridge), return_best_params=False, early_stop_rfm=False,
                  prefit_eigenpro=False, total_points_to_sample=agop_samples - batch, M_batch_size=batch, solver="cholesky")
        seconds = time.perf_counter() - t0
    model.probe = None
    return model, list(model.test_mse_), seconds


@dataclass
class XRFMOracle:
    """xrfm's per-cluster oracle: per cluster (rows, in the order of ``clusters``) its training and
    test counts, the test MSE of iterations 0..T on its own test points and its fit's wall time."""

    clusters: np.ndarray
    n_train: np.ndarray
    n_test: np.ndarray
    test_mse: np.ndarray
    seconds: np.ndarray

    def pooled_test_mse(self) -> np.ndarray:
        """Per iteration, the test MSE over all test points (each routed to its own cluster's
        fit): what :class:`~monosem.kernels.PerClusterOracle` scores."""
        w = self.n_test / self.n_test.sum()
        return w @ self.test_mse


def xrfm_oracle(X, y, groups, X_test, y_test, groups_test, *, iterations: int = 3, **kwargs) -> XRFMOracle:
    """One :func:`xrfm_rfm` fit per true cluster (iterations 0..``iterations``), each scored on
    that cluster's test points: the ``oracle-rfm`` method fitted by xrfm. ``kwargs`` go to
    :func:`xrfm_rfm` (bandwidth, ridge, agop_samples, dtype, seed...). A cluster without test
    points is not fitted; a test point of a cluster without training points is an error."""
    cpu = torch.device("cpu")
    X = as_matrix(X, "X", cpu, torch.float64)
    y = as_vector(y, "y", X.shape[0], cpu, torch.float64)
    g = as_groups(groups, X.shape[0], cpu)
    Xt = as_matrix(X_test, "X_test", cpu, torch.float64, X.shape[1])
    yt = as_vector(y_test, "y_test", Xt.shape[0], cpu, torch.float64)
    gt = as_groups(groups_test, Xt.shape[0], cpu)
    clusters = torch.unique(g)
    unseen = sorted(set(torch.unique(gt).tolist()) - set(clusters.tolist()))
    if unseen:
        raise ValueError(f"groups_test contains clusters {unseen} that had no training examples")
    rows = []
    for k in clusters.tolist():
        sel, sel_t = g == k, gt == k
        if not bool(sel_t.any()):
            continue
        _, mse, seconds = xrfm_rfm(X[sel], y[sel], Xt[sel_t], yt[sel_t], iterations=iterations, **kwargs)
        rows.append((k, int(sel.sum()), int(sel_t.sum()), mse, seconds))
    return XRFMOracle(
        clusters=np.array([r[0] for r in rows]), n_train=np.array([r[1] for r in rows]), n_test=np.array([r[2] for r in rows]),
        test_mse=np.array([r[3] for r in rows], dtype=float), seconds=np.array([r[4] for r in rows], dtype=float),
    )
