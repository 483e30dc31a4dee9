"""Kernel ridge regression with the metric Laplace kernel: :class:`LaplaceKernelRegressor`.

The estimator of Appendix A.2: k(x, x') = exp(-||M^{1/2}(x - x')||_2 / h) (eq. 7), ridge 1e-6,
solved exactly (float64 Cholesky) below 11 000 training examples and iteratively above --
EigenPro without a ridge, stopped at training MSE 4e-4, as in the paper; conjugate gradients on
the ridge system is offered too. scikit-learn compatible (``fit``/``predict``/``score``/
``get_params``); NumPy arrays or torch tensors in, NumPy out of :meth:`predict`.
"""

from __future__ import annotations

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin

from ..checks import check_choice, check_int, check_nonnegative
from ..device import get_device, resolve_dtype, torch_generator
from .agop import AGOP_MAX_SAMPLES, agop_from_gradients, laplace_gradients, subsample_rows
from .bandwidth import resolve_bandwidth
from .eigenpro import EigenProConfig, solve_eigenpro
from .inputs import as_groups, as_matrix, as_vector, check_metric, check_positive, to_numpy
from .laplace import KernelOperator, default_block_bytes, kernel_blocks, kernel_matvec, memory_budget, metric_sqrt, transform
from ..data import LABEL_NOISE_VARIANCE
from .solvers import EXACT_PRECISIONS, SolveInfo, solve_cg, solve_exact

__all__ = ["LaplaceKernelRegressor", "SOLVERS", "EXACT_MAX_N"]

SOLVERS = ("auto", "exact", "cg", "eigenpro")
#: Appendix A.2: "Exact kernel solves are used for fewer than 11 000 training examples".
EXACT_MAX_N = 11_000


class LaplaceKernelRegressor(RegressorMixin, BaseEstimator):
    """Kernel ridge regression with the metric Laplace kernel (Appendix A.2, eq. 7).

    Parameters
    ----------
    bandwidth:
        A positive number (held fixed) or a rule computed from the transformed training inputs:
        ``"median"`` (label-free, the default) or ``"cluster-median"`` (the paper's; needs
        ``fit(X, y, groups=c)``). See :mod:`monosem.kernels.bandwidth`.
    metric:
        ``None`` (the identity: the isotropic Laplace kernel) or a symmetric PSD ``(d, d)`` matrix M.
    ridge:
        lambda in (K + lambda I) alpha = y for the exact and CG solvers (the paper's 1e-6).
        EigenPro solves K alpha = y without a ridge, as in the paper.
    solver:
        ``"exact"`` (a direct solve of the float64 system), ``"cg"``, ``"eigenpro"``, or ``"auto"``: exact below
        ``exact_max_n`` (11 000) training examples, EigenPro above (the paper's rule, kept on every
        device; ``benchmarks/kernels.py`` compares CG and EigenPro against n).
    exact_precision:
        How the exact solver factorizes: ``"mixed"`` (the default: a float32 Cholesky factor and
        float64 refinement to a relative residual of 1e-12; the factorization takes 0.55 of a float64
        one's time on one core at n = 5 000; the solution agrees with it to rounding, a tested
        fact) or ``"float64"``.
        See :func:`~monosem.kernels.solvers.solve_exact`.
    target_mse:
        Early-stopping target of the iterative solvers: training MSE 4e-4.
    max_iter:
        Iteration limit of the iterative solvers (CG products; EigenPro epochs).
    eigenpro:
        An :class:`~monosem.kernels.eigenpro.EigenProConfig` (``None``: the defaults).
    device, dtype:
        Where and in what precision to compute (:func:`monosem.device.get_device`,
        :func:`~monosem.device.resolve_dtype`); the exact solver always solves the float64 system
        (see ``exact_precision``).
    block_bytes:
        Memory of one kernel block (bounded-memory evaluation; ``None``: per device, 4 MiB on the
        CPU and 256 MiB on CUDA, see :func:`~monosem.kernels.laplace.default_block_bytes`).
    cache_bytes:
        The iterative solvers keep the whole training kernel when it fits in this many bytes
        (``None``: :func:`~monosem.kernels.laplace.memory_budget`), else stream it.
    random_state:
        Seed of the subsamples (bandwidth medians, EigenPro's Nystrom points, AGOP rows).
    """

    def __init__(
        self,
        bandwidth="median",
        metric=None,
        ridge: float = 1e-6,
        solver: str = "auto",
        *,
        exact_precision: str = "mixed",
        target_mse: float = LABEL_NOISE_VARIANCE,
        max_iter: int = 200,
        exact_max_n: int = EXACT_MAX_N,
        eigenpro: EigenProConfig | None = None,
        device=None,
        dtype=None,
        block_bytes: int | None = None,
        cache_bytes: int | None = None,
        random_state: int = 0,
    ) -> None:
        self.bandwidth = bandwidth
        self.metric = metric
        self.ridge = ridge
        self.solver = solver
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

    # ------------------------------------------------------------------------------ fitting
    def _check_params(self) -> None:
        if self.solver not in SOLVERS:
            check_choice(self.solver, "solver", SOLVERS)
        check_choice(self.exact_precision, "exact_precision", EXACT_PRECISIONS)
        check_nonnegative(self.ridge, "ridge")
        check_positive(self.target_mse, "target_mse")
        check_int(self.max_iter, "max_iter")
        check_int(self.exact_max_n, "exact_max_n", what="exact solves below this many examples")
        if self.eigenpro is not None and not isinstance(self.eigenpro, EigenProConfig):
            raise ValueError(f"eigenpro must be None or an EigenProConfig, got {type(self.eigenpro).__name__}")
        if isinstance(self.bandwidth, str) or self.bandwidth is None:
            if self.bandwidth not in ("median", "cluster-median"):
                raise ValueError(f"bandwidth={self.bandwidth!r} must be a positive number, 'median' or 'cluster-median'")
        else:
            check_positive(self.bandwidth, "bandwidth")

    def fit(self, X, y, groups=None) -> "LaplaceKernelRegressor":
        """Fit on inputs ``X`` ``(n, d)`` and responses ``y`` ``(n,)``.

        ``groups`` (cluster labels) are used only by ``bandwidth="cluster-median"``, to choose the
        bandwidth; they never enter the regression.
        """
        dev, X64, Z, z_mean, M, M_sqrt = self._geometry(X)
        n = X64.shape[0]
        y64 = as_vector(y, "y", n, dev, torch.float64)
        g = None if groups is None else as_groups(groups, n, dev)
        solver = self.solver
        if solver == "auto":
            solver = "exact" if n < self.exact_max_n else "eigenpro"
        # Precision, on every device (a T4 runs float64 at 1/32 of its float32 rate, so float64 is
        # kept only where accuracy needs it): the iterative solvers, their kernel blocks and the
        # predictions run in the working dtype (float32 by default); float64 stays for the exact
        # solve (the paper's ridge of 1e-6 leaves K + ridge I with a condition number far beyond
        # float32's 1e7; its factorization is float32 with float64 refinement, "mixed"), for the
        # AGOP's gradients (1 / ||z - z_i|| amplifies float32 round-off in the distances) and
        # for the (n, d) inputs and their centring (n d numbers: negligible work).
        work = torch.float64 if solver == "exact" else resolve_dtype(self.dtype)
        if n < 2 and isinstance(self.bandwidth, str):
            raise ValueError("a bandwidth rule needs at least 2 samples (got 1 sample)")
        h = resolve_bandwidth(self.bandwidth, Z, g, seed=self.random_state)
        block = default_block_bytes(dev) if self.block_bytes is None else int(self.block_bytes)
        alpha, info = self._solve(solver, Z, y64, h, work, block)
        return self._set_fitted(dev, Z, z_mean, M, M_sqrt, h, solver, info, alpha.to(work), block)

    def _geometry(self, X):
        """The device, the float64 inputs, their centred transform z = M^{1/2} x - mean with its
        mean, and the metric with its square root (both None for the identity)."""
        self._check_params()
        dev = get_device(self.device)
        X64 = as_matrix(X, "X", dev, torch.float64)
        d = X64.shape[1]
        if self.metric is None:
            M, M_sqrt = None, None
        else:
            M = check_metric(self.metric, d)
            M_sqrt = metric_sqrt(M).to(dev)
        Z = transform(X64, M_sqrt)
        z_mean = Z.mean(0)
        # translation-invariant kernel: centring only reduces round-off
        return dev, X64, Z - z_mean, z_mean, M, M_sqrt

    def _set_fitted(self, dev, Z, z_mean, M, M_sqrt, h, solver, info, alpha, block) -> "LaplaceKernelRegressor":
        self.n_features_in_ = Z.shape[1]
        self.bandwidth_ = h
        self.metric_ = None if M is None else M.numpy()
        self.solver_ = solver
        self.solve_info_ = info
        self.n_iter_ = max(1, info.iterations)
        self.dual_coef_ = alpha
        self._Z = Z.to(alpha.dtype)
        self._z_mean = z_mean
        self._M_sqrt = M_sqrt
        self._work_dtype = alpha.dtype
        self._device = dev
        self._block = block
        return self

    def fitted_state(self) -> dict:
        """What a fit computed beyond the training inputs, as tensors and plain values (readable
        by ``torch.load(..., weights_only=True)``): :meth:`restore` rebuilds the fitted estimator
        from it and the same inputs."""
        self._check_fitted()
        info = self.solve_info_
        plain = (bool, int, float, str)
        return {
            "bandwidth": float(self.bandwidth_), "solver": self.solver_, "dual_coef": self.dual_coef_.detach().cpu(),
            "info": {"solver": info.solver, "n": int(info.n), "iterations": int(info.iterations), "train_mse": float(info.train_mse),
                     "converged": bool(info.converged), "ridge": float(info.ridge), "seconds": float(info.seconds),
                     "setup_seconds": float(info.setup_seconds), "history": [float(v) for v in info.history],
                     "details": {k: v for k, v in info.details.items() if isinstance(v, plain)}},
        }

    def restore(self, X, state: dict) -> "LaplaceKernelRegressor":
        """This estimator fitted on ``X`` as :meth:`fitted_state` recorded it (with this
        estimator's parameters, the metric among them): its predictions equal the original fit's
        to the bit (the same inputs, transform and coefficients)."""
        dev, X64, Z, z_mean, M, M_sqrt = self._geometry(X)
        alpha = state["dual_coef"].to(dev)
        if alpha.shape != (X64.shape[0],):
            raise ValueError(f"state: dual_coef has shape {tuple(alpha.shape)}, expected ({X64.shape[0]},) for these inputs")
        block = default_block_bytes(dev) if self.block_bytes is None else int(self.block_bytes)
        info = SolveInfo(**state["info"])
        return self._set_fitted(dev, Z, z_mean, M, M_sqrt, float(state["bandwidth"]), str(state["solver"]), info, alpha, block)

    def _solve(self, solver: str, Z: torch.Tensor, y64: torch.Tensor, h: float, work: torch.dtype, block: int):
        """The dual coefficients of (K + ridge I) alpha = y on the centred, transformed inputs ``Z``
        by ``solver`` (exact, CG or EigenPro), and the solve's :class:`SolveInfo`."""
        n, dev = Z.shape[0], Z.device
        if solver == "exact":

            def build_K() -> torch.Tensor:
                K = torch.empty(n, n, device=dev, dtype=torch.float64)
                for rows, Kb in kernel_blocks(Z, Z, h, block):
                    K[rows] = Kb
                return K

            alpha, info = solve_exact(build_K, y64, float(self.ridge), precision=self.exact_precision)
        else:
            cache = memory_budget(dev) if self.cache_bytes is None else int(self.cache_bytes)
            if solver == "cg":
                op = KernelOperator(Z.to(work), h, cache_bytes=cache, block_bytes=block)
                alpha, info = solve_cg(op, y64.to(work), float(self.ridge), target_mse=float(self.target_mse), max_iter=int(self.max_iter))
            else:
                # EigenPro's mini-batches are contiguous row blocks: shuffle the points once so
                # that every block is a random subset (the kernel is permutation-equivariant)
                perm = torch.randperm(n, generator=torch_generator(self.random_state + 7)).to(dev)
                op = KernelOperator(Z[perm].to(work), h, cache_bytes=cache, block_bytes=block)
                alpha_p, info = solve_eigenpro(
                    op, y64[perm].to(work), target_mse=float(self.target_mse), max_iter=int(self.max_iter),
                    config=self.eigenpro or EigenProConfig(), seed=self.random_state,
                )
                alpha = torch.empty_like(alpha_p)
                alpha[perm] = alpha_p
            del op
        return alpha, info

    # ---------------------------------------------------------------------------- predicting
    def _check_fitted(self) -> None:
        if not hasattr(self, "dual_coef_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet; call fit(X, y) first.")

    def transform_inputs(self, X) -> torch.Tensor:
        """Centred transformed inputs z = M^{1/2} x - mean, in the working dtype."""
        self._check_fitted()
        X64 = as_matrix(X, "X", self._device, torch.float64, self.n_features_in_, type(self).__name__)
        return (transform(X64, self._M_sqrt) - self._z_mean).to(self._work_dtype)

    def predict_tensor(self, X) -> torch.Tensor:
        """Predictions as a tensor on the compute device (no host copy)."""
        Zq = self.transform_inputs(X)
        return kernel_matvec(Zq, self._Z, self.bandwidth_, self.dual_coef_, self._block)

    def predict(self, X) -> np.ndarray:
        """Predictions f(x) = sum_i alpha_i k(x, x_i) as a float64 NumPy array."""
        return to_numpy(self.predict_tensor(X))

    # --------------------------------------------------------------------------- gradients
    def gradients(self, X) -> torch.Tensor:
        """``(m, d)`` closed-form input gradients grad_x f at the rows of ``X`` (float64 tensor)."""
        Zq = self.transform_inputs(X)
        gz = laplace_gradients(Zq, self._Z, self.dual_coef_, self.bandwidth_, block_bytes=self._block)
        return gz if self._M_sqrt is None else gz @ self._M_sqrt.to(gz.device)

    def agop_tensor(
        self,
        X=None,
        *,
        max_samples: int | None = AGOP_MAX_SAMPLES,
        seed: int = 0,
        centered: bool = False,
    ) -> torch.Tensor:
        """The unnormalized AGOP over ``X`` (default: the training inputs), as a float64 tensor.

        On the training inputs each point's own kernel term (at zero distance) is excluded.
        Gradients are taken with respect to the input x (the paper's G), not the transformed z.
        """
        self._check_fitted()
        if X is None:
            idx = subsample_rows(self._Z.shape[0], max_samples, seed)
            if idx is None:
                idx = torch.arange(self._Z.shape[0])
            idx = idx.to(self._device)
            gz = laplace_gradients(self._Z[idx], self._Z, self.dual_coef_, self.bandwidth_, self_index=idx, block_bytes=self._block)
        else:
            Zq = self.transform_inputs(X)
            idx = subsample_rows(Zq.shape[0], max_samples, seed)
            if idx is not None:
                Zq = Zq[idx.to(Zq.device)]
            gz = laplace_gradients(Zq, self._Z, self.dual_coef_, self.bandwidth_, block_bytes=self._block)
        Gz = agop_from_gradients(gz, centered=centered)
        if self._M_sqrt is None:
            return Gz
        S = self._M_sqrt.to(Gz.device)
        return S @ Gz @ S

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags
