"""Solvers for the kernel system of kernel ridge regression (Appendix A.2).

The fitted predictor is f(x) = sum_i alpha_i k(x, x_i) with alpha solving

    (K + lambda I) alpha = y.

* :func:`solve_exact` -- the paper's solver below 11 000 examples: a direct solve of the float64
  system with ridge lambda = 1e-6. By default (``precision="mixed"``) the Cholesky factor is
  computed in float32 (half the time and memory of the factorization) and the float64 solution is
  recovered by conjugate gradients on the float64 system preconditioned with that factor, to a
  relative residual of 1e-12 (a float64 Cholesky solve reaches ~1e-15): iterative refinement in the
  sense of Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 12, made robust by CG for
  the ill-conditioned kernels of late RFM iterations. If the float32 factorization fails or the
  refinement stalls, the float64 factorization is used (recorded in ``details``).
  ``precision="float64"`` factorizes in float64 directly. If the float64 factorization fails (a
  numerically singular K, e.g. duplicated points and a tiny ridge), the ridge is raised tenfold
  at a time, at most ``max_jitter_steps`` times, with a warning; the ridge finally used is
  recorded.
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

__all__ = ["SolveInfo", "solve_exact", "solve_cg", "EXACT_PRECISIONS"]

#: how :func:`solve_exact` factorizes: ``"mixed"`` (float32 factor, float64 refinement) or ``"float64"``
EXACT_PRECISIONS = ("mixed", "float64")
#: the refinement's stopping rule: relative residual ||y - (K + lambda I) alpha|| / ||y||
REFINE_TOL = 1e-12
#: refinement steps before falling back to the float64 factorization (typically 3-8 are needed)
REFINE_MAX_STEPS = 40


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
    build_K: Callable[[], torch.Tensor], y: torch.Tensor, ridge: float, *, max_jitter_steps: int = 6,
    precision: str = "mixed",
) -> tuple[torch.Tensor, SolveInfo]:
    """alpha = (K + ridge I)^{-1} y by a direct solve of the float64 system.

    ``build_K()`` returns the float64 ``(n, n)`` kernel matrix. With ``precision="float64"`` it is
    factorized in place, so the peak memory is one n x n float64 matrix (0.97 GB at the paper's
    largest exact size, n = 11 000). With ``"mixed"`` (the default; see the module docstring) a
    float32 copy is factorized and the float64 matrix is kept for the refinement's products:
    1.5 times that memory, half the factorization time, the same solution to a relative residual
    of 1e-12. If the float64 factorization fails (a numerically singular K: duplicated points
    with a tiny ridge), K is rebuilt and the ridge raised tenfold (zero becomes 1e-10), at most
    ``max_jitter_steps`` times, each with a ``RuntimeWarning``; the ridge finally used is in the
    returned :class:`SolveInfo`. If every attempt fails a ``RuntimeError`` says what to do.
    """
    if precision not in EXACT_PRECISIONS:
        raise ValueError(f"precision={precision!r} is not allowed; use one of {list(EXACT_PRECISIONS)}")
    t0 = time.perf_counter()
    lam = float(ridge)
    y64 = y.to(torch.float64)
    details: dict = {"precision": precision}
    for step in range(max_jitter_steps + 1):
        K = build_K()
        if K.dtype != torch.float64:
            raise ValueError(f"solve_exact needs a float64 kernel matrix, got {K.dtype}")
        n = K.shape[0]
        K.diagonal().add_(lam)
        if precision == "mixed" and step == 0:
            alpha, residual, refine = _refined_solve(K, y64)
            details.update(refine)
            if alpha is not None:
                return alpha, _exact_info(n, lam, alpha, residual, t0, details)
        _, info = torch.linalg.cholesky_ex(K, out=(K, torch.empty((), dtype=torch.int32, device=K.device)))
        if int(info) == 0:
            alpha = torch.cholesky_solve(y64.reshape(n, 1), K)[:, 0]
            # (K + lam I) alpha = y, so K alpha - y = -lam alpha (up to the solve's round-off)
            return alpha, _exact_info(n, lam, alpha, None, t0, details)
        del K
        if step < max_jitter_steps:
            new_lam = 1e-10 if lam == 0.0 else 10.0 * lam
            warnings.warn(f"Cholesky failed with ridge {lam:.3g}; retrying with {new_lam:.3g}", RuntimeWarning, stacklevel=2)
            lam = new_lam
    raise RuntimeError(
        f"the kernel matrix (n={n}) is not numerically positive definite even with ridge {lam:.3g}; "
        "remove duplicated training points or raise `ridge`"
    )


def _exact_info(n: int, lam: float, alpha: torch.Tensor, residual: torch.Tensor | None, t0: float, details: dict) -> SolveInfo:
    """The :class:`SolveInfo` of a direct solve; the training residual K alpha - y is
    -(lam alpha + r) with r = y - (K + lam I) alpha (r = 0 for a factorization's solve)."""
    err = lam * alpha if residual is None else lam * alpha + residual
    return SolveInfo("exact", n, iterations=1, train_mse=float(err.square().mean()), ridge=lam,
                     seconds=time.perf_counter() - t0, details=details)


def _refined_solve(A: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None, dict]:
    """The float64 solution of ``A alpha = y`` (A symmetric positive definite, float64) and its
    residual ``y - A alpha``, by conjugate gradients preconditioned with A's float32 Cholesky
    factor; ``(None, None, details)`` when that
    factorization fails or the residual does not reach :data:`REFINE_TOL` in
    :data:`REFINE_MAX_STEPS` steps (the caller then factorizes in float64).

    The preconditioner is applied in float32, so it is only nearly a fixed linear map; the
    Polak-Ribiere form of beta keeps CG convergent under such a perturbation (flexible CG).
    """
    L = A.to(torch.float32)
    _, info = torch.linalg.cholesky_ex(L, out=(L, torch.empty((), dtype=torch.int32, device=L.device)))
    if int(info) != 0:
        return None, None, {"refined": False, "fallback": "the float32 factorization failed"}

    def precondition(r: torch.Tensor) -> torch.Tensor:
        return torch.cholesky_solve(r.to(torch.float32).unsqueeze(1), L)[:, 0].to(torch.float64)

    y_norm = float(y.norm()) or 1.0
    alpha = precondition(y)
    r = y - A @ alpha
    z = precondition(r)
    p, rz = z.clone(), float(r @ z)
    rel = float(r.norm()) / y_norm
    steps = 0
    while rel > REFINE_TOL and steps < REFINE_MAX_STEPS:
        Ap = A @ p
        pAp = float(p @ Ap)
        if not pAp > 0.0:
            break
        step = rz / pAp
        alpha.add_(p, alpha=step)
        r_old = r.clone()
        r.sub_(Ap, alpha=step)
        steps += 1
        rel = float(r.norm()) / y_norm
        z_new = precondition(r)
        beta = max(0.0, float(z_new @ (r - r_old)) / rz)
        rz = float(r @ z_new)
        p.mul_(beta).add_(z_new)
    details = {"refined": True, "refine_steps": steps, "relative_residual": rel}
    if rel > REFINE_TOL:
        return None, None, {**details, "refined": False, "fallback": f"the refinement stalled at relative residual {rel:.2e}"}
    return alpha, r, details


def solve_cg(
    op: KernelOperator,
    y: torch.Tensor,
    ridge: float,
    *,
    # the paper's early-stopping target: training MSE 4e-4, the label-noise variance 0.02^2
    target_mse: float = LABEL_NOISE_VARIANCE,
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
