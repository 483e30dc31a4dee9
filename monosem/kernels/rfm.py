"""The Recursive Feature Machine (Radhakrishnan et al. 2024, ref. [25]; Appendix A.2).

    M_0 = I;  for t = 0, 1, ..., T:
        fit Laplace KRR with metric M_t and bandwidth h_t (recomputed in the M_t geometry),
        if t < T:  M_{t+1} = normalize(AGOP of the fitted predictor on <= 20 000 training points).

With T = ``iterations`` = 3 this gives the paper's iterations 0-3, iteration 0 being the
isotropic Laplace baseline. Every iteration's predictor is kept, so both the paper's
"smallest test MSE among iterations 0:3" (an optimistic envelope, needs a test set) and a
deployable choice (the last iteration, or one chosen on held-out data) are available.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin

from ..atomic import atomic_torch_save, quarantine
from ..checks import check_int
from .agop import AGOP_MAX_SAMPLES, NORMALIZATIONS, normalize_metric
from .inputs import as_matrix, as_vector, to_numpy
from .regressor import EXACT_MAX_N, LaplaceKernelRegressor
from ..data import LABEL_NOISE_VARIANCE

__all__ = ["RFMRegressor"]


class RFMRegressor(RegressorMixin, BaseEstimator):
    """Recursive Feature Machine with the metric Laplace kernel (Appendix A.2).

    Parameters
    ----------
    iterations:
        Number T of AGOP metric updates; fits are made at iterations 0..T (the paper: 3).
    bandwidth, ridge, solver, exact_precision, target_mse, max_iter, exact_max_n, eigenpro, device, dtype,
    block_bytes, cache_bytes, random_state:
        Passed to every iteration's :class:`LaplaceKernelRegressor`. A bandwidth rule is
        recomputed after every metric update.
    agop_samples:
        At most this many training points estimate the AGOP (the paper's m = 20 000).
    normalize:
        How the AGOP becomes the next metric: ``"max"`` (largest eigenvalue 1, the default),
        ``"trace"`` or ``None``. With a median bandwidth rule the choice does not change the fit.
    centered:
        Use the covariance of the gradients instead of their second moment (not the paper's).
    initial_metric:
        M_0 (``None``: the identity, as in the paper).
    """

    def __init__(
        self,
        iterations: int = 3,
        bandwidth="median",
        ridge: float = 1e-6,
        solver: str = "auto",
        *,
        agop_samples: int | None = AGOP_MAX_SAMPLES,
        normalize: str | None = "max",
        centered: bool = False,
        initial_metric=None,
        exact_precision: str = "mixed",
        target_mse: float = LABEL_NOISE_VARIANCE,
        max_iter: int = 200,
        exact_max_n: int = EXACT_MAX_N,
        eigenpro=None,
        device=None,
        dtype=None,
        block_bytes: int | None = None,
        cache_bytes: int | None = None,
        random_state: int = 0,
    ) -> None:
        self.iterations = iterations
        self.bandwidth = bandwidth
        self.ridge = ridge
        self.solver = solver
        self.agop_samples = agop_samples
        self.normalize = normalize
        self.centered = centered
        self.initial_metric = initial_metric
        self.exact_precision = exact_precision
        self.target_mse = target_mse
        self.max_iter = max_iter
        self.exact_max_n = exact_max_n
        self.eigenpro = eigenpro
        self.device = device
        self.dtype = dtype
        self.block_bytes = block_bytes
        self.cache_bytes = cache_bytes
        self.random_state = random_state

    def _laplace(self, metric) -> LaplaceKernelRegressor:
        return LaplaceKernelRegressor(
            bandwidth=self.bandwidth, metric=metric, ridge=self.ridge, solver=self.solver,
            exact_precision=self.exact_precision, target_mse=self.target_mse, max_iter=self.max_iter, exact_max_n=self.exact_max_n,
            eigenpro=self.eigenpro, device=self.device, dtype=self.dtype, block_bytes=self.block_bytes,
            cache_bytes=self.cache_bytes, random_state=self.random_state,
        )

    def fit(self, X, y, groups=None, *, X_test=None, y_test=None, checkpoint: str | os.PathLike | None = None) -> "RFMRegressor":
        """Run iterations 0..T on ``(X, y)``; with ``X_test, y_test`` record each iteration's test MSE.

        ``groups`` only feed ``bandwidth="cluster-median"``. The test set never influences the fit.
        ``checkpoint``: a file written (atomically) after every iteration with what it computed:
        its fit's coefficients, its record and the next metric. A fit with the same parameters
        and data finds it and resumes after the last finished iteration, with the same result
        as an uninterrupted fit, bit for bit; a damaged file is moved aside with a warning, one
        written for other parameters or data is an error.
        """
        check_int(self.iterations, "iterations", 0)
        if self.normalize not in NORMALIZATIONS:
            raise ValueError(f"normalize={self.normalize!r} is not allowed; use one of {list(NORMALIZATIONS)}")
        if self.agop_samples is not None:
            check_int(self.agop_samples, "agop_samples", what="or None: use every training point")
        if (X_test is None) != (y_test is None):
            raise ValueError("pass both X_test and y_test, or neither")
        ckpt = _IterationCheckpoint(checkpoint, self, X, y, groups)
        metric, done = self.initial_metric, ckpt.load()
        self.estimators_: list[LaplaceKernelRegressor] = []
        self.history_: list[dict] = []
        # the wall and process-CPU seconds of the iterations restored from the checkpoint
        self.resumed_seconds_ = sum(float(it["seconds"]) for it in done)
        self.resumed_cpu_seconds_ = sum(float(it["cpu_seconds"]) for it in done)
        for t in range(int(self.iterations) + 1):
            if t < len(done):
                est = self._laplace(metric).restore(X, done[t]["state"])
                record = _record_from_saved(done[t]["record"])
                metric = None if done[t]["next_metric"] is None else done[t]["next_metric"].numpy()
                self.estimators_.append(est)
                self.history_.append(record)
                continue
            t0, c0 = time.perf_counter(), time.process_time()
            est, record, metric = self._iteration(t, metric, X, y, groups)
            self.estimators_.append(est)
            self.history_.append(record)
            done.append({"state": est.fitted_state(), "record": _record_to_save(record),
                         "next_metric": None if t == self.iterations else torch.as_tensor(metric),
                         "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0})
            ckpt.save(done)
        if X_test is not None:
            first = self.estimators_[0]
            X_test = as_matrix(X_test, "X_test", first._device, torch.float64, first.n_features_in_)
            yt = as_vector(y_test, "y_test", X_test.shape[0], first._device, torch.float64)
            for est, record in zip(self.estimators_, self.history_):
                record["test_mse"] = float((est.predict_tensor(X_test).to(torch.float64) - yt).square().mean())
        final = self.estimators_[-1]
        self.n_features_in_ = final.n_features_in_
        self.metric_ = self.history_[-1]["metric"]
        self.bandwidth_ = final.bandwidth_
        self.n_iter_ = len(self.estimators_)
        test = [r["test_mse"] for r in self.history_]
        self.best_iteration_ = int(np.nanargmin(test)) if X_test is not None else None
        return self

    def _iteration(self, t: int, metric, X, y, groups) -> tuple[LaplaceKernelRegressor, dict, np.ndarray | None]:
        """Iteration ``t`` of :meth:`fit`: the Laplace fit under ``metric`` (``None``: the identity),
        its record (test MSE not yet scored), and the metric of iteration ``t + 1`` from its AGOP
        (``metric`` itself after the last iteration, which computes no AGOP)."""
        t0 = time.perf_counter()
        est = self._laplace(metric).fit(X, y, groups)
        fit_s = time.perf_counter() - t0
        record = {
            "iteration": t,
            "metric": np.eye(est.n_features_in_) if metric is None else est.metric_,
            "bandwidth": est.bandwidth_,
            "train_mse": est.solve_info_.train_mse,
            "solver": est.solver_,
            "solver_iterations": est.solve_info_.iterations,
            "solver_converged": bool(est.solve_info_.converged),
            "solver_step_halvings": int(est.solve_info_.details.get("step_halvings", 0)),
            "fit_seconds": fit_s,
            "test_mse": float("nan"),
            "agop_seconds": float("nan"),
        }
        if t < self.iterations:
            t1 = time.perf_counter()
            G = est.agop_tensor(max_samples=self.agop_samples, seed=self.random_state + t, centered=self.centered)
            metric = to_numpy(normalize_metric(G, self.normalize))
            record["agop_seconds"] = time.perf_counter() - t1
        return est, record, metric

    def _check_fitted(self) -> None:
        if not hasattr(self, "estimators_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet; call fit(X, y) first.")

    def _estimator(self, iteration: int | None) -> LaplaceKernelRegressor:
        self._check_fitted()
        if iteration is None:
            return self.estimators_[-1]
        return self.estimators_[check_int(iteration, "iteration", 0, len(self.estimators_) - 1)]

    def predict(self, X, iteration: int | None = None) -> np.ndarray:
        """Predictions of iteration ``iteration`` (default: the last, iteration T)."""
        return self._estimator(iteration).predict(X)

    def predict_tensor(self, X, iteration: int | None = None) -> torch.Tensor:
        """Like :meth:`predict`, as a tensor on the compute device."""
        return self._estimator(iteration).predict_tensor(X)

    @property
    def test_mse_(self) -> list[float]:
        """Per-iteration test MSEs recorded by ``fit(..., X_test=, y_test=)`` (NaN when none)."""
        self._check_fitted()
        return [r["test_mse"] for r in self.history_]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags


# ------------------------------------------------------------------------- checkpoints
#: the record entries a checkpoint keeps (the test MSE is recomputed from the restored predictor)
_SAVED_RECORD = ("iteration", "bandwidth", "train_mse", "solver", "solver_iterations", "solver_converged",
                 "solver_step_halvings", "fit_seconds", "agop_seconds")


def _record_to_save(record: dict) -> dict:
    return {k: record[k] for k in _SAVED_RECORD} | {"metric": torch.as_tensor(record["metric"])}


def _record_from_saved(saved: dict) -> dict:
    return {k: saved[k] for k in _SAVED_RECORD} | {"metric": saved["metric"].numpy(), "test_mse": float("nan")}


def _digest(*arrays) -> str:
    """A SHA-256 of arrays' dtypes, shapes and bytes (``None`` entries included as such)."""
    h = hashlib.sha256()
    for a in arrays:
        if a is None:
            h.update(b"none;")
            continue
        t = a.detach().cpu() if isinstance(a, torch.Tensor) else torch.as_tensor(np.asarray(a))
        h.update(f"{t.dtype}{tuple(t.shape)};".encode())
        h.update(t.contiguous().numpy().tobytes())
    return h.hexdigest()


class _IterationCheckpoint:
    """An RFM fit's checkpoint file (or none): the finished iterations, each with its fit's state,
    its record and the next metric, under a fingerprint of the estimator's parameters and data."""

    def __init__(self, path: str | os.PathLike | None, est: "RFMRegressor", X, y, groups) -> None:
        self.path = None if path is None else Path(path)
        if self.path is None:
            return
        params = {k: (_digest(v) if isinstance(v, (np.ndarray, torch.Tensor)) else repr(v)) for k, v in sorted(est.get_params().items())}
        self.fingerprint = {"params": params, "data": _digest(X, y, groups)}

    def load(self) -> list[dict]:
        """The finished iterations (none without a file; a damaged one is moved aside, with a
        warning naming it, and the fit starts afresh)."""
        if self.path is None or not self.path.exists():
            return []
        try:
            saved = torch.load(self.path, map_location="cpu", weights_only=True)
            if not isinstance(saved, dict) or not isinstance(saved.get("iterations"), list) or "fingerprint" not in saved:
                raise ValueError("not an RFM checkpoint")
        except Exception as err:  # noqa: BLE001 - whatever torch.load raises on a damaged file
            quarantine(self.path, str(err) or type(err).__name__, then="the fit starts afresh")
            return []
        if saved["fingerprint"] != self.fingerprint:
            raise ValueError(f"checkpoint {self.path} was written by an RFM fit with other parameters or data; "
                             "delete it or pass another path")
        return saved["iterations"]

    def save(self, done: list[dict]) -> None:
        if self.path is not None:
            atomic_torch_save({"fingerprint": self.fingerprint, "iterations": done}, self.path)
