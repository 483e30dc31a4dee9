"""The separation experiment that Theorem 2 predicts (Section 4.2).

On ``noiseless_routing_mixture(K)`` (d = 2K, clipped-ramp link, noiseless routing), for sample
sizes n = ceil(scale * K^A), compare the test error E(f_hat - f*)^2 of

* ``"mlp"`` -- a two-layer bias-free ReLU network f(x) = sum_j a_j relu(w_j^T x) fit by Adam on
  the squared loss under the Frobenius constraint (1/2) sum_j (a_j^2 + ||w_j||^2) <= B = 3K
  (Euclidean projection onto the ball after every step), predictions clipped to [0, 1];
* ``"laplace"`` -- isotropic Laplace kernel ridge regression (a rotationally invariant kernel);
* ``"rfm_true_agop"`` -- Laplace KRR in the metric M_rho = M + rho I with the ground-truth AGOP
  M = (alpha/K) P_V of Lemma 12 (the comparator of Theorem 2);
* ``"rfm_empirical"`` -- the Recursive Feature Machine with empirical AGOP (3 iterations, the
  last one reported), which Theorem 2 does *not* cover.

Why projection rather than a penalty: the theorem's estimator is ERM over the constrained class.
The loss is the unclipped squared loss: f* itself lies in F_{3K} (Lemma 10), so an unclipped
empirical minimizer with zero loss is also an empirical minimizer over clip o F_{3K}; clipping
the predictions can only reduce the error because f* takes values in [0, 1]. Adam from a random
start need not find the global minimizer: the training loss is reported alongside.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch
from matplotlib.ticker import NullFormatter
from tqdm import tqdm

from ...data import noiseless_routing_mixture
from ...device import get_device, torch_generator
from ...kernels import LaplaceKernelRegressor, RFMRegressor
from ...plots import PAGE_WIDTH
from ...profiles import Theorem2Sizes, get_profile
from ...theory.hermite import clipped_ramp_moments
from ...theory.kernel_bound import kernel_lower_bound
from ...theory.separation import agop_bayes_lower_bound, ground_truth_agop, mlp_risk_upper_bound

__all__ = [
    "theorem2_rows",
    "METHODS",
    "FrobeniusMLPConfig",
    "FrobeniusMLP",
    "fit_frobenius_mlp",
    "sample_sizes",
    "fit_and_score",
    "run_separation",
    "SeparationResult",
    "rho_sweep",
    "plot_learning_curves",
    "learning_curves_figure",
]

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


def sample_sizes(K: int, sizes: Theorem2Sizes) -> list[tuple[float, int]]:
    """(A, n) pairs with n = ceil(n_scale * K^A), for every exponent whose n is at most n_max."""
    out = []
    for A in sizes.exponents:
        n = math.ceil(sizes.n_scale * K**A)
        if n <= sizes.n_max:
            out.append((float(A), n))
    return out


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


@dataclass
class SeparationResult:
    """Rows of (K, A, n, method, test_mse, ...) plus the theory references for each (K, n)."""

    rows: list[dict] = field(default_factory=list)
    sizes: Theorem2Sizes | None = None

    def frame(self) -> pd.DataFrame:
        """The result as a table: one row per (K, A, n), the methods' test MSEs as columns
        (named with spaces for underscores),
        then Lemma 16's bound ("LB (L16)") and Lemma 12's floor (1 - 1/K) Var g ("floor (L12)"),
        indexed by (K, A, n)."""
        rows = []
        for K, A, n in sorted({(r["K"], r["A"], r["n"]) for r in self.rows}):
            row = {"K": K, "A": A, "n": n}
            # spaces for underscores: the headers can wrap in a narrow column
            row |= {r["method"].replace("_", " "): r["test_mse"] for r in self.rows if (r["K"], r["A"], r["n"]) == (K, A, n)}
            row |= {"LB (L16)": kernel_lower_bound(n, K), "floor (L12)": agop_bayes_lower_bound(K)}
            rows.append(row)
        return pd.DataFrame(rows).set_index(["K", "A", "n"])

    def series(self, method: str, A: float) -> tuple[np.ndarray, np.ndarray]:
        """(K values, test MSEs) of ``method`` at exponent ``A``, sorted by K."""
        pts = sorted((r["K"], r["test_mse"]) for r in self.rows if r["method"] == method and r["A"] == A)
        return np.array([p[0] for p in pts]), np.array([p[1] for p in pts])


def run_separation(
    sizes: Theorem2Sizes | str = "cpu",
    *,
    methods: tuple[str, ...] = METHODS,
    seed: int = 0,
    device: str | torch.device | None = None,
) -> SeparationResult:
    """Run every (K, n = ceil(n_scale K^A)) of ``sizes`` for every method; one run per point.

    ``"mlp"`` runs once per budget factor of ``sizes.mlp_budget_factors``, in rows named
    ``"mlp_B3K"``, ``"mlp_B6K"``, ...

    Training sets are ``model.pool(n, run=seed)`` and test sets ``model.test_set(n_test, run=seed)``
    of ``noiseless_routing_mixture(K)``; the test responses are noiseless, so the test MSE is
    the L^2(P_x) error ||f_hat - f*||^2 of Theorem 2. Data are drawn on the CPU; fits run on
    ``device`` (``None``: :func:`monosem.device.get_device`, a GPU when there is one).
    """
    if isinstance(sizes, str):
        sizes = get_profile(sizes).theorem2
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"method={m!r} is not allowed; use one of {list(METHODS)}")
    mlps = {
        f"mlp_B{factor:g}K": FrobeniusMLPConfig(
            width_per_cluster=sizes.mlp_width_per_cluster, budget_factor=float(factor), steps=sizes.mlp_steps,
            lr=sizes.mlp_lr,
        )
        for factor in sizes.mlp_budget_factors
    }
    jobs = [(K, A, n) for K in sizes.Ks for A, n in sample_sizes(K, sizes)]
    result = SeparationResult(sizes=sizes)
    for K, A, n in tqdm(jobs, desc="Theorem 2 separation"):
        model = noiseless_routing_mixture(K)
        x, y, _ = model.pool(n, run=seed, dtype=torch.float64, device="cpu")
        xt, yt, _ = model.test_set(sizes.n_test, run=seed, dtype=torch.float64, device="cpu")
        runs = [(name, "mlp", cfg) for name, cfg in mlps.items()] if "mlp" in methods else []
        runs += [(m, m, None) for m in methods if m != "mlp"]
        for name, method, cfg in runs:
            row = fit_and_score(
                method, x, y, xt, yt, K, mlp=cfg or FrobeniusMLPConfig(), rho_ratio=sizes.rho_ratio,
                rfm_iterations=sizes.rfm_iterations, seed=seed, device=device,
            )
            row.update(method=name, K=K, A=A, n=n, mlp_bound=float(mlp_risk_upper_bound(n, K)))
            result.rows.append(row)
    return result


def rho_sweep(
    K: int, n: int, rho_ratios: tuple[float, ...], *, n_test: int = 2048, seed: int = 0
) -> list[dict]:
    """Test error of Laplace KRR in the metric M_rho = (alpha/K) P_V + rho I for several rho.

    rho = ratio * alpha / K. Theorem 2's lower bound is uniform in rho: rho = 0 is Lemma 12's
    routing-blind metric, rho -> infinity approaches the isotropic Laplace kernel.
    """
    model = noiseless_routing_mixture(K)
    x, y, _ = model.pool(n, run=seed, dtype=torch.float64, device="cpu")
    xt, yt, _ = model.test_set(n_test, run=seed, dtype=torch.float64, device="cpu")
    out = []
    for ratio in rho_ratios:
        row = fit_and_score("rfm_true_agop", x, y, xt, yt, K, rho_ratio=ratio, seed=seed)
        row.update(K=K, n=n, rho_ratio=float(ratio), lower_bound=kernel_lower_bound(n, K))
        out.append(row)
    return out


def plot_learning_curves(result: SeparationResult, axes) -> list:
    """One panel per K: test MSE against n for every method (log-log), with Lemma 16's bound
    (dotted, where it falls inside the panel), Lemma 12's floor (1 - 1/K) Var g for rho = 0 (grey)
    and the trivial risk Var g (black, thin). Each panel has its own y-range, chosen so that every
    curve and both lines show. Returns the legend handles (for one legend shared by the panels)."""
    Ks = sorted({r["K"] for r in result.rows})
    axes = np.atleast_1d(axes).ravel()
    if len(axes) < len(Ks):
        raise ValueError(f"need one axis per K ({len(Ks)}), got {len(axes)}")
    methods = list(dict.fromkeys(r["method"] for r in result.rows))
    styles = {"mlp_B3K": ("C3", "o-"), "mlp_B6K": ("C1", "o-"), "laplace": ("C0", "s-"),
              "rfm_true_agop": ("C2", "^-"), "rfm_empirical": ("C4", "v-")}
    trivial = clipped_ramp_moments()["variance"]
    handles = []
    for ax, K in zip(axes, Ks):
        values = []
        for i, m in enumerate(methods):
            pts = sorted((r["n"], r["test_mse"]) for r in result.rows if r["K"] == K and r["method"] == m)
            color, style = styles.get(m, (f"C{5 + i}", "o-"))
            (line,) = ax.loglog([p[0] for p in pts], [p[1] for p in pts], style, color=color, ms=3, label=m)
            values += [p[1] for p in pts]
            if ax is axes[0]:
                handles.append(line)
        floor = agop_bayes_lower_bound(K)
        lo = min([v for v in values if v > 0] + [floor]) / 1.6
        hi = max(values + [trivial]) * 1.6
        ax.set_ylim(lo, hi)
        ns = np.array(sorted({r["n"] for r in result.rows if r["K"] == K}), dtype=float)
        lb = np.asarray(kernel_lower_bound(ns, K))
        shown = lb >= lo  # the bound far below every error would squash the curves
        (bound,) = ax.loglog(ns[shown], lb[shown], "k:", lw=1, label="Lemma 16 lower bound")
        rho0 = ax.axhline(floor, color="grey", lw=1, label=r"$(1-1/K)\,$Var $g$ (Lemma 12, $\rho = 0$)")
        triv = ax.axhline(trivial, color="k", lw=0.6, label="Var $g$ (trivial risk)")
        ax.xaxis.set_minor_formatter(NullFormatter())  # log-axis minor labels collide on short ranges
        ax.set(xlabel="$n$", title=f"K = {K}")
        if ax is axes[0]:
            handles += [bound, rho0, triv]
    for j, ax in enumerate(axes[: len(Ks)]):
        if j % 2 == 0:
            ax.set_ylabel("test MSE")
    for ax in axes[len(Ks):]:
        ax.set_visible(False)
    return handles


def learning_curves_figure(result: SeparationResult):
    """:func:`plot_learning_curves` on a grid of two panels per row, one legend below them."""
    import matplotlib.pyplot as plt

    Ks = sorted({r["K"] for r in result.rows})
    rows = max(1, (len(Ks) + 1) // 2)
    fig, axes = plt.subplots(rows, 2, figsize=(PAGE_WIDTH, 2.9 * rows + 0.9), layout="constrained", squeeze=False)
    handles = plot_learning_curves(result, axes)
    fig.legend(handles=handles, loc="outside lower center", ncols=2)
    return fig


def separation_findings(result: SeparationResult, rho_rows: list[dict] | None = None) -> dict[str, str]:
    """What page 08's experiment shows, one sentence per finding, each with the numbers behind it
    (computed from ``result`` and the ``rho_rows`` of :func:`rho_sweep`; for ``glue``): ``small``
    (the smallest budgets), ``mlp_best`` (where an MLP has the lowest error), ``example`` (the
    largest K at the largest budget), ``grow`` (kernel errors against K at A = 2), ``true_agop``
    (the ground-truth metric), ``rho`` (the rho sweep), ``rfm`` (the empirical AGOP), ``train``
    (whether the MLP at B = 3K fits its training set), ``direction`` (the theorem's direction at
    finite size) and ``direction_holds`` ("yes", "partly" or "no")."""
    df = result.frame()
    mlps = [c for c in df.columns if c.startswith("mlp")]
    kernels = [c for c in ("laplace", "rfm true agop", "rfm empirical") if c in df.columns]
    if not mlps or "laplace" not in df.columns:
        return {k: "not computed at this profile" for k in ("small", "mlp_best", "example", "grow", "true_agop", "rho", "rfm", "train",
                                                            "direction")} | {"direction_holds": "no"}
    best_mlp = df[mlps].min(axis=1)
    return (_budget_findings(df, best_mlp, mlps + kernels, kernels) | _kernel_findings(df, rho_rows)
            | _direction_findings(df, best_mlp) | {"train": _train_finding(result)})


def _budget_findings(df: pd.DataFrame, best_mlp: pd.Series, methods: list[str], kernels: list[str]) -> dict[str, str]:
    """Which method wins at which budget: ``small``, ``mlp_best``, ``example``, ``grow``."""
    A, K = df.index.get_level_values("A"), df.index.get_level_values("K")
    out = {}
    small = df[A <= 1.5]
    if len(small):
        winners = small[methods].idxmin(axis=1).value_counts()
        out["small"] = (f"at the smallest budgets (A ≤ 1.5) the lowest error is {winners.index[0].replace('_', ' ')}'s at "
                        f"{winners.iloc[0]} of {len(small)} points, and the best error is at least "
                        f"{small[methods].min(axis=1).min():.3g}")
    else:
        out["small"] = "no point has A ≤ 1.5 at this profile"
    big = df[(A >= 2) & (K >= 8)]
    if len(big):
        wins = int((best_mlp[big.index] < big[kernels].min(axis=1)).sum())
        top = df[(A >= 2.5) & (K >= 8)]
        ratio = (top["laplace"] / best_mlp[top.index]) if len(top) else None
        out["mlp_best"] = (f"from A = 2 on, at K ≥ 8, an MLP has the lowest error at {wins} of {len(big)} points"
                           + (f"; at A ≥ 2.5 Laplace's error is {ratio.min():.1f}–{ratio.max():.1f} times the best MLP's" if ratio is not None else ""))
    else:
        out["mlp_best"] = "no point has A ≥ 2 and K ≥ 8 at this profile"
    last = df[A == A.max()]
    kmax = last.index.get_level_values("K").max()
    at_kmax = last[last.index.get_level_values("K") == kmax]
    row, n_ex = at_kmax.iloc[-1], at_kmax.index[-1][2]
    out["example"] = (f"K = {kmax}, n = {n_ex}: best MLP {best_mlp[(kmax, A.max(), n_ex)]:.3g}, Laplace {row['laplace']:.3g}"
                      + (f", empirical RFM {row['rfm empirical']:.3g}" if "rfm empirical" in row else ""))
    at2 = df[A == 2.0]
    if len(at2):
        out["grow"] = ("at A = 2, Laplace's error is " + ", ".join(f"{v:.3g}" for v in at2["laplace"])
                       + f" for K = {', '.join(str(k) for k in at2.index.get_level_values('K'))}, and the best MLP's "
                       + ", ".join(f"{v:.3g}" for v in best_mlp[at2.index]))
    else:
        out["grow"] = "no point has A = 2 at this profile"
    return out


def _kernel_findings(df: pd.DataFrame, rho_rows: list[dict] | None) -> dict[str, str]:
    """The kernels handed the true metric (``true_agop``, ``rho``) and the empirical AGOP (``rfm``)."""
    out = {}
    if "rfm true agop" in df.columns:
        largest = df.groupby(level="K").tail(1)
        worse = int((largest["rfm true agop"] > largest["laplace"]).sum())
        floor_gap = largest["rfm true agop"] / largest["floor (L12)"]
        out["true_agop"] = (f"at the largest n of each K, Laplace with the ground-truth AGOP is worse than isotropic Laplace for "
                            f"{worse} of {len(largest)} K, at {floor_gap.min():.2f}–{floor_gap.max():.2f} times Lemma 12's floor (1 − 1/K) Var g")
    else:
        out["true_agop"] = "not computed at this profile"
    if rho_rows:
        best = min(rho_rows, key=lambda r: r["test_mse"])
        ratios = ", ".join(f"{r['rho_ratio']:g}" for r in rho_rows)
        out["rho"] = (f"over ρ / (α/K) in {ratios}, the lowest error is {best['test_mse']:.3g} (at {best['rho_ratio']:g}), "
                      f"against the trivial risk Var g = {float(clipped_ramp_moments()['variance']):.3g}")
    else:
        out["rho"] = "not computed"
    if "rfm empirical" in df.columns:
        better = df[df["rfm empirical"] < df["laplace"]]
        out["rfm"] = (f"RFM with the empirical AGOP beats isotropic Laplace at {len(better)} of {len(df)} points"
                      + (f", all with A ≥ {better.index.get_level_values('A').min():g}" if len(better) else ""))
    else:
        out["rfm"] = "not computed at this profile"
    return out


def _direction_findings(df: pd.DataFrame, best_mlp: pd.Series) -> dict[str, str]:
    """The theorem's direction at finite size: kernel errors grow with K at a fixed exponent, and
    the best MLP's error falls as n grows at each K."""
    grows = [bool(np.all(np.diff(g["laplace"].to_numpy()) > 0)) for _, g in df.groupby(level="A") if len(g) > 1]
    falls = [bool(np.all(np.diff(best_mlp[g.index].to_numpy()) < 0)) for _, g in df.groupby(level="K") if len(g) > 1]
    holds = "yes" if grows and falls and all(grows) and all(falls) else "partly" if any(grows) and any(falls) else "no"
    return {"direction": (f"Laplace's error grows with K at {sum(grows)} of {len(grows)} exponents, and the best MLP's error falls "
                          f"with n at {sum(falls)} of {len(falls)} K"), "direction_holds": holds}


def _train_finding(result: SeparationResult) -> str:
    """Whether the MLP at the theorem's budget B = 3K fits its training set at the largest (K, n)."""
    train = [r for r in result.rows if r["method"] == "mlp_B3K"]
    if not train:
        return "not computed at this profile"
    r = max(train, key=lambda r: (r["K"], r["n"]))
    return f"the MLP at B = 3K ends at training MSE {r['train_mse_clipped']:.2g} (clipped) at K = {r['K']}, n = {r['n']}"


def separation_claims(findings: dict[str, str], page: str, scale: str) -> list:
    """Page 08's row of the status page: the direction Theorem 2 predicts, judged at finite size
    (:func:`separation_findings`): "reproduces" when it holds at every exponent and every K,
    "not settled" when in part, "does not reproduce" otherwise. The theorem's limit itself is not
    testable by simulation."""
    from ..verdicts import Claim

    status = {"yes": "reproduces", "partly": "not settled"}.get(findings["direction_holds"], "does not reproduce")
    return [Claim(page, "Theorem 2's direction at finite size: kernel error grows with K, the MLP's falls with n", scale, status,
                  findings["direction"])]


def theorem2_rows(profile: str) -> list[dict[str, Any]]:
    """Section 4.2's separation experiment at ``profile``: one row per (K, A, n, method)."""
    P = get_profile(profile)
    result = run_separation(P.theorem2)
    return [{"figure": "theorem2", "profile": P.name, **{k: v for k, v in row.items() if not isinstance(v, (list, dict))}}
            for row in result.rows]
