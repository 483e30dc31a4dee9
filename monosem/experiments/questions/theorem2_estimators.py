"""The four estimators of Section 4.2's separation experiment, each computed as a cell of the
result store (:mod:`monosem.experiments.cache`).

A cell's data is :class:`RoutingData`: ``n`` training and ``n_test`` test points of
``noiseless_routing_mixture(K)`` (d = 2K, clipped-ramp link, noiseless routing), drawn with run
``run``'s seeds. Its method is one of :data:`CELL_METHODS`:

* ``"t2-mlp"`` -- a two-layer bias-free ReLU network f(x) = sum_j a_j relu(w_j^T x) fit by Adam on
  the squared loss under the Frobenius constraint (1/2) sum_j (a_j^2 + ||w_j||^2) <= B
  (Euclidean projection onto the ball after every step), predictions clipped to [0, 1]; its spec
  is :class:`FrobeniusMLPConfig` (B = ``budget_factor`` K; Theorem 2: 3K);
* ``"t2-laplace"`` -- isotropic Laplace kernel ridge regression (a rotationally invariant kernel;
  no settings of its own);
* ``"t2-rfm-true-agop"`` -- Laplace KRR in the metric M_rho = M + rho I with the ground-truth AGOP
  M = (alpha/K) P_V of Lemma 12 (the comparator of Theorem 2); spec :class:`TrueAGOPSpec`;
* ``"t2-rfm-empirical"`` -- the Recursive Feature Machine with empirical AGOP (the last iteration
  reported), which Theorem 2 does *not* cover; spec :class:`EmpiricalAGOPSpec`.

Why projection rather than a penalty: the theorem's estimator is ERM over the constrained class.
The loss is the unclipped squared loss: f* itself lies in F_{3K} (Lemma 10), so an unclipped
empirical minimizer with zero loss is also an empirical minimizer over clip o F_{3K}; clipping
the predictions can only reduce the error because f* takes values in [0, 1]. Adam from a random
start need not find the global minimizer: the training loss is reported alongside.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import torch

from ...data import noiseless_routing_mixture
from ...device import get_device, torch_generator
from ...kernels import LaplaceKernelRegressor, RFMRegressor
from ...theory.hermite import clipped_ramp_moments
from ...theory.separation import ground_truth_agop, mlp_risk_upper_bound
from ..registry import register_method

__all__ = ["METHODS", "CELL_METHODS", "RoutingData", "FrobeniusMLPConfig", "FrobeniusMLP", "fit_frobenius_mlp", "fit_and_score",
           "TrueAGOPSpec", "EmpiricalAGOPSpec", "compute_cell"]

METHODS = ("mlp", "laplace", "rfm_true_agop", "rfm_empirical")


@dataclass(frozen=True)
class FrobeniusMLPConfig:
    """The Frobenius-constrained two-layer ReLU MLP of the experiment.

    ``width = width_per_cluster * K`` hidden units (Lemma 10 needs 2K), budget
    B = ``budget_factor * K`` (Theorem 2: 3K), ``steps`` full-batch Adam steps at learning rate
    ``lr`` with cosine decay, initial weights N(0, init_std^2 / d) (hidden) and N(0, init_std^2 / m)
    (output).
    """

    width_per_cluster: int = 4
    budget_factor: float = 3.0
    steps: int = 1500
    lr: float = 0.02
    init_std: float = 1.0
    max_batch: int = 4096

    def __post_init__(self) -> None:
        if not (isinstance(self.width_per_cluster, int) and self.width_per_cluster >= 1):
            raise ValueError(f"width_per_cluster={self.width_per_cluster!r} must be an integer >= 1")
        for name in ("budget_factor", "lr", "init_std"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name}={v!r} must be a positive finite number")
        if not (isinstance(self.steps, int) and self.steps >= 1):
            raise ValueError(f"steps={self.steps!r} must be an integer >= 1")
        if not (isinstance(self.max_batch, int) and self.max_batch >= 1):
            raise ValueError(f"max_batch={self.max_batch!r} must be an integer >= 1")


class FrobeniusMLP(torch.nn.Module):
    """f(x) = sum_j a_j relu(w_j^T x), bias-free, as in Section 4.2."""

    def __init__(self, d: int, width: int, init_std: float, seed: int) -> None:
        super().__init__()
        gen = torch_generator(seed)
        self.W = torch.nn.Parameter(torch.randn(width, d, generator=gen) * init_std / math.sqrt(d))
        self.a = torch.nn.Parameter(torch.randn(width, generator=gen) * init_std / math.sqrt(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ self.W.T) @ self.a

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        """clip(f(x)) = min(1, max(0, f(x))), the estimator of Section 4.2."""
        with torch.no_grad():
            return self(x).clamp(0.0, 1.0)

    def frobenius_sq(self) -> float:
        """||theta||_F^2 = (1/2) sum_j (a_j^2 + ||w_j||^2)."""
        return 0.5 * float(self.a.detach().pow(2).sum() + self.W.detach().pow(2).sum())

    @torch.no_grad()
    def project_(self, budget: float) -> None:
        """Euclidean projection onto {||theta||_F^2 <= budget}: rescale all weights if outside."""
        f = self.frobenius_sq()
        if f > budget:
            s = math.sqrt(budget / f)
            self.W.mul_(s)
            self.a.mul_(s)


def fit_frobenius_mlp(
    x: torch.Tensor,
    y: torch.Tensor,
    K: int,
    config: FrobeniusMLPConfig = FrobeniusMLPConfig(),
    *,
    seed: int = 0,
    device: str | torch.device | None = "cpu",
) -> tuple[FrobeniusMLP, dict]:
    """Projected Adam on the squared loss over F_B, B = budget_factor * K (see the module docstring).

    Full batch up to ``config.max_batch`` examples, minibatches (reshuffled each pass) above.
    The initial weights are drawn on the CPU (the same on every device), then everything moves
    to ``device`` (``None``: :func:`monosem.device.get_device`).
    Returns the network and ``{"train_mse", "train_mse_clipped", "frobenius_sq", "budget"}``.
    """
    dev = get_device(device)
    x = x.to(dev, torch.float32)
    y = y.to(dev, torch.float32)
    n, d = x.shape
    budget = config.budget_factor * K
    net = FrobeniusMLP(d, config.width_per_cluster * K, config.init_std, seed).to(dev)
    net.project_(budget)
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=config.steps)
    gen = torch_generator(seed + 1)
    batch = min(n, config.max_batch)
    perm, pos = torch.randperm(n, generator=gen), 0
    for _ in range(config.steps):
        if batch == n:
            xb, yb = x, y
        else:
            if pos + batch > n:
                perm, pos = torch.randperm(n, generator=gen), 0
            idx = perm[pos : pos + batch].to(dev)
            pos += batch
            xb, yb = x[idx], y[idx]
        loss = (net(xb) - yb).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        net.project_(budget)
    with torch.no_grad():
        info = {
            "train_mse": float((net(x) - y).pow(2).mean()),
            "train_mse_clipped": float((net.predict(x) - y).pow(2).mean()),
            "frobenius_sq": net.frobenius_sq(),
            "budget": budget,
        }
    return net, info


def fit_and_score(
    method: str,
    x: torch.Tensor,
    y: torch.Tensor,
    x_test: torch.Tensor,
    y_test: torch.Tensor,
    K: int,
    *,
    mlp: FrobeniusMLPConfig = FrobeniusMLPConfig(),
    rho_ratio: float = 0.1,
    rfm_iterations: int = 3,
    seed: int = 0,
    device: str | torch.device | None = "cpu",
) -> dict:
    """Fit one method on (x, y) and return its test MSE against the noiseless y_test = f*(x_test).

    ``rho_ratio`` sets the RFM regularization rho = rho_ratio * alpha / K for ``"rfm_true_agop"``.
    """
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not allowed; use one of {list(METHODS)}")
    t0 = time.perf_counter()
    extra: dict = {}
    if method == "mlp":
        net, extra = fit_frobenius_mlp(x, y, K, mlp, seed=seed, device=device)
        pred = net.predict(x_test.to(net.W.device, torch.float32)).cpu().to(torch.float64)
    elif method == "laplace":
        pred = torch.as_tensor(LaplaceKernelRegressor(bandwidth="median", device=device).fit(x, y).predict(x_test))
    elif method == "rfm_true_agop":
        if not (isinstance(rho_ratio, (int, float)) and rho_ratio >= 0):
            raise ValueError(f"rho_ratio={rho_ratio!r} must be a number >= 0")
        rho = rho_ratio * clipped_ramp_moments()["alpha"] / K
        metric = ground_truth_agop(K) + rho * torch.eye(2 * K, dtype=torch.float64)
        pred = torch.as_tensor(
            LaplaceKernelRegressor(bandwidth="median", metric=metric.numpy(), device=device).fit(x, y).predict(x_test)
        )
        extra = {"rho": rho}
    else:
        rfm = RFMRegressor(iterations=rfm_iterations, bandwidth="median", random_state=seed, device=device).fit(x, y)
        pred = torch.as_tensor(rfm.predict(x_test))
    test_mse = float((pred.to(torch.float64) - y_test.to(torch.float64)).pow(2).mean())
    return {"method": method, "test_mse": test_mse, "seconds": time.perf_counter() - t0, **extra}



@dataclass(frozen=True)
class RoutingData:
    """A cell's data: ``n`` training points (``model.pool(n, run)``) and ``n_test`` noiseless test
    points (``model.test_set(n_test, run)``) of ``noiseless_routing_mixture(K)``, in float64 on
    the CPU (the fits move them to their device)."""

    K: int
    n: int
    run: int
    n_test: int

    def sample(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(x, y, x_test, y_test); the test responses are f*(x_test), so a test MSE is the
        L^2(P_x) error of Theorem 2."""
        model = noiseless_routing_mixture(self.K)
        x, y, _ = model.pool(self.n, run=self.run, dtype=torch.float64, device="cpu")
        xt, yt, _ = model.test_set(self.n_test, run=self.run, dtype=torch.float64, device="cpu")
        return x, y, xt, yt


@dataclass(frozen=True)
class TrueAGOPSpec:
    """The ground-truth-AGOP kernel's regularization: rho = ``rho_ratio`` alpha / K."""

    rho_ratio: float


@dataclass(frozen=True)
class EmpiricalAGOPSpec:
    """RFM with the empirical AGOP: its number of metric updates (the last iteration is scored)."""

    iterations: int


#: the cells' methods -> the estimator of :func:`fit_and_score` each runs
CELL_METHODS = {"t2-mlp": "mlp", "t2-laplace": "laplace", "t2-rfm-true-agop": "rfm_true_agop", "t2-rfm-empirical": "rfm_empirical"}


def compute_cell(job, cache=None) -> dict[str, Any]:
    """One cell: fit the job's estimator on its data (seed: the run) and score it on the noiseless
    test set; with Theorem 2's upper bound on the MLP's risk at (n, K) beside it."""
    spec = job.spec
    settings: dict[str, Any] = {}
    if isinstance(spec, FrobeniusMLPConfig):
        settings["mlp"] = spec
    elif isinstance(spec, TrueAGOPSpec):
        settings["rho_ratio"] = spec.rho_ratio
    elif isinstance(spec, EmpiricalAGOPSpec):
        settings["rfm_iterations"] = spec.iterations
    x, y, xt, yt = job.data.sample()
    row = fit_and_score(CELL_METHODS[job.method], x, y, xt, yt, job.K, seed=job.run, device=None, **settings)
    return row | {"mlp_bound": float(mlp_risk_upper_bound(job.n, job.K))}


for _name in CELL_METHODS:
    register_method(_name, compute=compute_cell)
