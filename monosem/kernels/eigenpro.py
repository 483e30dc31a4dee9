"""An EigenPro-style preconditioned mini-batch iteration for kernel interpolation.

Above 11 000 examples the paper solves K alpha = y with EigenPro (Ma & Belkin 2019; Abedsoltan
et al. 2023; refs [52, 53]) *without* an explicit ridge, stopping at training MSE 4e-4 or at the
iteration limit, so early stopping is the regularizer (Appendix A.2). This module implements the
EigenPro 2 iteration:

1. Nystrom subsample: s training points, kernel K_s; the top q+1 eigenpairs (lambda_j, e_j) of
   K_s / s estimate those of the empirical kernel operator K / n.
2. Preconditioner P = I - sum_{j<=q} (1 - lambda_{q+1}/lambda_j) psi_j (x) psi_j, with
   psi_j = (s lambda_j)^{-1/2} sum_l e_j[l] k(x_l, .) the unit-RKHS-norm Nystrom eigenfunctions.
   It flattens the top q directions of the spectrum to lambda_{q+1}.
3. Mini-batch SGD on (1/2n) ||K alpha - y||^2 in the RKHS, preconditioned by P. For a batch B of
   size m with residual g = f(x_B) - y_B:
       alpha_B   -= (eta / m) g
       alpha_sub += (eta / m) E diag((1 - lambda_{q+1}/lambda_j) / (s lambda_j)) E^T K[sub, B] g.
   The step size is the one the preconditioned spectrum allows (Ma, Bassily & Belkin 2018):
   eta = m / (beta + (m - 1) lambda_{q+1}), beta = max_i of the preconditioned kernel diagonal,
   with the batch capped at the critical size m* = beta / lambda_{q+1} beyond which larger
   batches stop helping.

After every epoch the training MSE of the iterate is estimated on a fixed random subset of
:data:`MONITOR_ROWS` training rows, and confirmed with one full product K alpha before stopping.
If an epoch takes it above :data:`DIVERGENCE_FACTOR` times the best so far (a too-large step: the
Nystrom estimate of lambda_{q+1} leaves part of the top of the spectrum unflattened), the best
iterate is restored and the step halved.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import torch

from ..checks import check_int
from ..device import torch_generator
from .laplace import KernelOperator, laplace_kernel
from ..data import LABEL_NOISE_VARIANCE
from .solvers import SolveInfo

__all__ = ["DIVERGENCE_FACTOR", "EigenProConfig", "solve_eigenpro", "nystrom_preconditioner"]

#: an epoch whose training MSE exceeds this multiple of the best so far counts as divergence
#: (the best iterate is restored and the step halved); mini-batch noise moves the epoch MSE by
#: far less once the iteration has settled
DIVERGENCE_FACTOR = 2.0
#: rows of the fixed random subset on which the training MSE is tracked between epochs
MONITOR_ROWS = 4096


@dataclass(frozen=True)
class EigenProConfig:
    """Settings of :func:`solve_eigenpro`.

    subsample:
        Nystrom subsample size s (EigenPro's defaults are a few thousand points).
    top_q:
        Number q of flattened eigen-directions (clipped to s - 1).
    max_batch:
        Cap on the mini-batch size (``None``: the critical batch m*, at most n).

    The "optimization limit" (passes over the data) is :func:`solve_eigenpro`'s ``max_iter``.
    """

    subsample: int = 2_000
    top_q: int = 160
    max_batch: int | None = None

    def __post_init__(self) -> None:
        for name in ("subsample", "top_q"):
            v = getattr(self, name)
            check_int(v, f"EigenProConfig.{name}")
        if self.max_batch is not None and (not isinstance(self.max_batch, int) or self.max_batch < 1):
            raise ValueError(f"EigenProConfig.max_batch={self.max_batch!r} must be None or an integer >= 1")


@dataclass
class NystromPreconditioner:
    """Top-q Nystrom eigensystem and the step it allows (see the module docstring)."""

    idx: torch.Tensor  # (s,) subsample indices
    E: torch.Tensor  # (s, q) eigenvectors of K_s
    D: torch.Tensor  # (q,) (1 - lambda_{q+1}/lambda_j) / (s lambda_j)
    lam_top: float  # lambda_1 of K_s / s
    lam_q1: float  # lambda_{q+1} of K_s / s
    beta: float  # max preconditioned diagonal


def _top_eigh(Ks: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The top k eigenpairs of a symmetric matrix, descending."""
    s = Ks.shape[0]
    if Ks.device.type == "cpu":
        # LAPACK's MRRR driver computes only the wanted eigenpairs, less work than a full
        # eigendecomposition for k << s
        lam, V = scipy.linalg.eigh(Ks.numpy(), subset_by_index=[s - k, s - 1], driver="evr", check_finite=False)
        lam, V = torch.from_numpy(np.ascontiguousarray(lam[::-1])), torch.from_numpy(np.ascontiguousarray(V[:, ::-1]))
    else:
        lam, V = torch.linalg.eigh(Ks)
        lam, V = lam.flip(0)[:k], V.flip(1)[:, :k]
    return lam.to(Ks.device), V.to(Ks.device)


def nystrom_preconditioner(op: KernelOperator, config: EigenProConfig, seed: int) -> NystromPreconditioner:
    """Subsample, eigendecompose and derive the preconditioner of EigenPro 2."""
    n = op.n
    s = min(config.subsample, n)
    q = min(config.top_q, s - 1)
    idx = torch.randperm(n, generator=torch_generator(seed))[:s].to(op.Z.device)
    Zs = op.Z[idx]
    Ks = laplace_kernel(Zs, Zs, op.bandwidth)
    lam, E = _top_eigh(Ks, q + 1)
    lam = lam / s
    lam_q1 = float(lam[q])
    lam_q = lam[:q]
    D = (1.0 - lam_q1 / lam_q) / (s * lam_q)
    # preconditioned diagonal on the subsample: k(x,x) - sum_j (1 - lam_q1/lam_j) psi_j(x)^2, with
    # psi_j(x_i) = sqrt(s lam_j) e_j[i] on subsample points
    diag = 1.0 - ((1.0 - lam_q1 / lam_q) * s * lam_q * E[:, :q].square()).sum(1)
    beta = float(diag.max().clamp_min(lam_q1))
    return NystromPreconditioner(idx=idx, E=E[:, :q].contiguous(), D=D, lam_top=float(lam[0]), lam_q1=lam_q1, beta=beta)


def _epoch(op: KernelOperator, pre, alpha: torch.Tensor, y: torch.Tensor, starts: list[int], m: int, eta: float) -> None:
    """One EigenPro 2 epoch in place: for each batch B (rows ``start`` to ``start + m``, in the
    order ``starts``), the stochastic gradient step on alpha_B and its Nystrom correction on the
    preconditioner's subsample."""
    n = op.n
    for start in starts:
        stop = min(start + m, n)
        KB = op.row_block(start, stop)  # (|B|, n)
        g = KB @ alpha - y[start:stop]
        step = eta / (stop - start)
        corr = pre.E @ (pre.D * (pre.E.T @ (g @ KB)[pre.idx]))
        alpha[start:stop] -= step * g
        alpha.index_add_(0, pre.idx, corr, alpha=step)


def _batch_and_step(pre, n: int, config: EigenProConfig) -> tuple[int, int, float]:
    """EigenPro 2's critical batch size m*, the batch size it runs (m* capped by ``max_batch`` and
    n) and its step size for that batch."""
    m_star = max(1, int(pre.beta / pre.lam_q1))
    m = min(n, m_star if config.max_batch is None else min(m_star, config.max_batch))
    return m_star, m, m / (pre.beta + (m - 1) * pre.lam_q1)


def _monitor(op: KernelOperator, y: torch.Tensor, seed: int):
    """The training MSE of an iterate, estimated on a fixed random subset of rows (an n_mon x n
    product, a fraction of an epoch's two n x n ones): what decides divergence and which iterate
    is best. The epoch's batch residuals are no estimate of the final iterate: in a slowly
    diverging run they read 0.04 while the iterate they kept as best had 0.31."""
    mon = torch.randperm(op.n, generator=torch_generator(seed + 2))[: min(op.n, MONITOR_ROWS)].to(op.Z.device)
    y_mon = y[mon]

    def monitored(a: torch.Tensor) -> float:
        return float((op.rows_matvec(mon, a) - y_mon).square().mean())

    return monitored


def solve_eigenpro(
    op: KernelOperator,
    y: torch.Tensor,
    *,
    target_mse: float = LABEL_NOISE_VARIANCE,
    max_iter: int = 100,
    config: EigenProConfig = EigenProConfig(),
    seed: int = 0,
) -> tuple[torch.Tensor, SolveInfo]:
    """Solve K alpha = y (no ridge) by EigenPro 2 until the training MSE reaches ``target_mse``
    or ``max_iter`` epochs have run.

    Mini-batches are contiguous blocks of rows, so the training points must come in random
    order (:class:`~monosem.kernels.regressor.LaplaceKernelRegressor` shuffles them).
    """
    t0 = time.perf_counter()
    n = op.n
    y = y.to(op.Z.dtype)
    pre = nystrom_preconditioner(op, config, seed)
    setup = time.perf_counter() - t0
    m_star, m, eta = _batch_and_step(pre, n, config)
    gen = torch_generator(seed + 1)
    monitored = _monitor(op, y, seed)
    alpha = torch.zeros_like(y)
    best_alpha, best_mse = alpha.clone(), float(y.square().mean())
    history = [best_mse]
    converged = best_mse <= target_mse
    halvings = 0
    epoch = 0
    # Batches are contiguous row blocks, visited in a fresh random order every epoch: a block of a
    # cached kernel is a view (no gather), and K[sub, B] g is read off g^T K[B, :]. The caller
    # shuffles the training points once, so the blocks are random subsets.
    starts = torch.arange(0, n, m)
    while not converged and epoch < max_iter:
        _epoch(op, pre, alpha, y, starts[torch.randperm(len(starts), generator=gen)].tolist(), m, eta)
        epoch += 1
        estimate = monitored(alpha)
        if not np.isfinite(estimate) or estimate > DIVERGENCE_FACTOR * best_mse:
            # diverging: restore the best iterate and halve the step
            alpha.copy_(best_alpha)
            eta *= 0.5
            halvings += 1
            history.append(best_mse)
            continue
        if estimate <= 2.0 * target_mse or epoch == max_iter:
            mse = float((op.matvec(alpha) - y).square().mean())  # confirmed on every row
        else:
            mse = estimate
        history.append(mse)
        if mse < best_mse:
            best_mse = mse
            best_alpha.copy_(alpha)
        converged = mse <= target_mse
    if not converged and epoch > 0:
        alpha = best_alpha
    final_mse = history[-1] if converged else float((op.matvec(alpha) - y).square().mean())
    details = {"batch": m, "critical_batch": m_star, "eta": eta, "lambda_q1": pre.lam_q1, "lambda_1": pre.lam_top,
               "beta": pre.beta, "subsample": int(pre.idx.shape[0]), "q": int(pre.E.shape[1]), "step_halvings": halvings}
    return alpha, SolveInfo("eigenpro", n, iterations=epoch, train_mse=final_mse, converged=converged, ridge=0.0,
                            seconds=time.perf_counter() - t0, setup_seconds=setup, history=history, details=details)
