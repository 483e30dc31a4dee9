"""Solvers for the kernel system of kernel ridge regression (Appendix A.2).

The fitted predictor is f(x) = sum_i alpha_i k(x, x_i) with alpha solving

    (K + lambda I) alpha = y.

* :func:`solve_exact` -- the paper's solver below 11 000 examples: a float64 Cholesky
  factorization with ridge lambda = 1e-6. If the factorization fails (a numerically singular K,
  e.g. duplicated points and a tiny ridge), the ridge is raised tenfold at a time, at most
  ``max_jitter_steps`` times, with a warning; the ridge finally used is recorded.
* :func:`solve_cg` -- conjugate gradients on the same system, stopped as soon as the training MSE
  ||K alpha - y||^2 / n reaches the paper's target 4e-4 (the early-stopping rule the paper uses
  for EigenPro) or after ``max_iter`` products.

The EigenPro iteration lives in :mod:`monosem.kernels.eigenpro`.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import torch

from ..data import LABEL_NOISE_VARIANCE
from .laplace import KernelOperator

__all__ = ["SolveInfo", "solve_exact", "solve_cg", "TARGET_TRAIN_MSE"]

#: The paper's early-stopping target: training MSE 4e-4, the label-noise variance 0.02^2.
TARGET_TRAIN_MSE = LABEL_NOISE_VARIANCE


@dataclass
class SolveInfo:
    """What a solver did: iterations, final training MSE, time, the ridge actually used."""

    solver: str
    n: int
    iterations: int = 0
    train_mse: float = float("nan")
    converged: bool = True
    ridge: float = 0.0
    seconds: float = 0.0
    setup_seconds: float = 0.0
    history: list[float] = field(default_factory=list)
    details: dict = field(default_factory=dict)


def solve_exact(
    build_K: Callable[[], torch.Tensor], y: torch.Tensor, ridge: float, *, max_jitter_steps: int = 6
) -> tuple[torch.Tensor, SolveInfo]:
    """alpha = (K + ridge I)^{-1} y by a float64 Cholesky factorization.

    ``build_K()`` returns the float64 ``(n, n)`` kernel matrix. It is factorized in place, so the
    peak memory is one n x n float64 matrix (0.97 GB at the paper's largest exact size,
    n = 11 000). If the factorization fails (a numerically singular K: duplicated points with a
    tiny ridge), K is rebuilt and the ridge raised tenfold (zero becomes 1e-10), at most
    ``max_jitter_steps`` times, each with a ``RuntimeWarning``; the ridge finally used is in the
    returned :class:`SolveInfo`. If every attempt fails a ``RuntimeError`` says what to do.
    """
    t0 = time.perf_counter()
    lam = float(ridge)
    for step in range(max_jitter_steps + 1):
        K = build_K()
        if K.dtype != torch.float64:
            raise ValueError(f"solve_exact needs a float64 kernel matrix, got {K.dtype}")
        n = K.shape[0]
        K.diagonal().add_(lam)
        _, info = torch.linalg.cholesky_ex(K, out=(K, torch.empty((), dtype=torch.int32, device=K.device)))
        if int(info) == 0:
            alpha = torch.cholesky_solve(y.to(torch.float64).reshape(n, 1), K)[:, 0]
            # (K + lam I) alpha = y, so K alpha - y = -lam alpha: the training MSE costs nothing
            train_mse = float((lam * alpha).square().mean())
            return alpha, SolveInfo("exact", n, iterations=1, train_mse=train_mse, ridge=lam, seconds=time.perf_counter() - t0)
        del K
        if step < max_jitter_steps:
            new_lam = 1e-10 if lam == 0.0 else 10.0 * lam
            warnings.warn(f"Cholesky failed with ridge {lam:.3g}; retrying with {new_lam:.3g}", RuntimeWarning, stacklevel=2)
            lam = new_lam
    raise RuntimeError(
        f"the kernel matrix (n={n}) is not numerically positive definite even with ridge {lam:.3g}; "
        "remove duplicated training points or raise `ridge`"
    )


def solve_cg(
    op: KernelOperator,
    y: torch.Tensor,
    ridge: float,
    *,
    target_mse: float = TARGET_TRAIN_MSE,
    max_iter: int = 200,
) -> tuple[torch.Tensor, SolveInfo]:
    """Conjugate gradients on (K + ridge I) alpha = y, stopped at training MSE ``target_mse``.

    The training residual K alpha - y = -(r + ridge alpha), with r the CG residual, is tracked
    without extra kernel products, so the stopping rule is checked at every iteration.
    """
    t0 = time.perf_counter()
    n = op.n
    y = y.to(op.Z.dtype)
    alpha = torch.zeros_like(y)
    r = y.clone()
    p = r.clone()
    rr = float(r @ r)
    history = [float(y.square().mean())]
    converged = history[0] <= target_mse
    it = 0
    while not converged and it < max_iter:
        Ap = op.matvec(p) + ridge * p
        pAp = float(p @ Ap)
        if not math.isfinite(pAp) or pAp <= 0.0:
            break  # loss of positive definiteness in finite precision: keep the best iterate so far
        step = rr / pAp
        alpha.add_(p, alpha=step)
        r.sub_(Ap, alpha=step)
        rr_new = float(r @ r)
        it += 1
        mse = float((r + ridge * alpha).square().mean())
        history.append(mse)
        if mse <= target_mse:
            converged = True
            break
        p.mul_(rr_new / rr).add_(r)
        rr = rr_new
    info = SolveInfo(
        "cg", n, iterations=it, train_mse=history[-1], converged=converged, ridge=float(ridge),
        seconds=time.perf_counter() - t0, history=history,
    )
    return alpha, info
