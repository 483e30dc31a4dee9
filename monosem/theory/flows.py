"""Population gradient flows of Theorem 1: teacher-only neurons (eq. 17/18) and the full network (Lemma 9).

Teacher-only dynamics, one independent neuron per row (Lemma 7):

    u' = Phi(omega),   omega' = tanh(u) grad_S Phi(omega),   u(0) = 0, omega(0) = omega^0.

Integrator: ``scipy.integrate.solve_ivp`` on all m neurons stacked in one state vector. The
right-hand side is the closed form of Lemma 3, O(m K) flops on an array of a few thousand
numbers, so a GPU or a torch integrator would buy nothing. What matters is the step control:
neurons start in a flat region (|Phi(omega^0)| can be 1e-6 when every |b_c| is large) and need
long times, while a converged neuron sits at a maximum whose curvature in the routing direction
grows like R^2 -- a stiff system. The default is therefore the implicit BDF method, with the
exact Jacobian in closed form (block-diagonal: the neurons are independent; the Hessian of Phi
is a sum of 2 x 2 blocks, one per cluster). A finite-difference Jacobian fails on long runs: once
u_j > 19, tanh(u_j) == 1 in floating point, the u_j column of the Jacobian is exactly zero, and
SciPy's ``num_jac`` multiplies that column's increment by 10 at every Jacobian evaluation, with no
upper bound, until it overflows and the LU factor is singular (the paper profile's K = 3, R = 32,
t_max = 5e4 run does). The flow is stiff at large R, hence the implicit BDF.

Full two-layer population gradient flow (Appendix B.1.3):

    a_j' = E[(y - f) relu(w_j^T x)],   w_j' = a_j E[(y - f) 1{w_j^T x > 0} x],
    a_j(0) = 0, w_j(0) = eps omega_j^0.

Its two expectations are computed differently, on purpose:

* the target cross term E[y relu(w_j^T x)] = ||w_j|| Phi(w_j/||w_j||) and its gradient
  Phi(omega) omega + grad_S Phi(omega) are **exact** (Lemma 3). Monte Carlo is not good enough
  here: at small initialization Phi(omega^0) is of the order of its own Monte-Carlo standard error
  even with 10^5-10^6 points, and the Monte-Carlo noise, not the landscape, then decides where the
  neurons go;
* the interaction term E[f relu(w_j^T x)] (and its gradient) is a **fixed Monte-Carlo sample**:
  n_mc Gaussian vectors z_i shared by the K clusters (x = mu_c + z_i for every c, so the cluster
  weights are exactly 1/K). Its error is proportional to f itself, O(m eps^2) during alignment, so
  it cannot spoil the m eps^2 tracking of Lemma 9; and because the sample is fixed the dynamics
  stay an exact gradient flow of the surrogate loss 1/2 E[y^2] - E[y f] + 1/2 E_n[f^2], so the
  invariant ||w_j||^2 - a_j^2 = eps^2 is preserved exactly. The exact alternative (bivariate
  Gaussian ReLU moments with non-zero means: bivariate normal CDFs for all m^2 K pairs and their
  gradients) is not available in torch; :attr:`TwoLayerFlow.interaction_rel_se` reports the
  sampling error instead.

The state is integrated in the rescaled variables (a/eps, w/eps), which are O(1) at the start,
entirely in torch (float64, on ``monosem.device.get_device()``, or on the CPU when the flow is
too small for a GPU to pay) by classical RK4 whose step
follows a curvature estimate of the vector field (teacher landscape + Gram matrix of the
hidden units + a_j^2): steps of ``h_max`` on the plateaus, shorter ones once the network fits
and the curvature of the loss grows. ``solve_ivp`` is not used here: see :func:`_rk4`.

One module for the two population flows of Theorem 1 (teacher-only and full network): they
share the closed-form correlation, its gradient and the integrator set-up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import torch
from scipy.integrate import solve_ivp
from scipy.sparse import csr_matrix

from ..checks import check_int, check_positive
from ..data import symmetric_mixture
from ..device import get_device, torch_generator
from .correlation import (
    _check_K,
    _check_omega,
    _check_R,
    _euclidean_hessian_blocks,
    _phi_and_grad,
    check_hermite_coeffs,
    spherical_hessian,
)
from .landscape import specialized_maximizer

__all__ = [
    "random_directions",
    "TeacherOnlyFlow",
    "teacher_only_flow",
    "TwoLayerFlow",
    "two_layer_population_flow",
    "tracking_error",
    "nearest_direction",
    "specialization_index",
]


def random_directions(m: int, K: int, seed: int) -> np.ndarray:
    """``m`` i.i.d. uniform unit vectors in R^{2K} (float64), the omega_j^0 of Section 4.1."""
    K = _check_K(K)
    m = check_int(m, "m", what="the number of neurons")
    g = torch.randn(m, 2 * K, generator=torch_generator(seed), dtype=torch.float64)
    return (g / g.norm(dim=1, keepdim=True)).numpy()


def nearest_direction(omega: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For unit rows ``omega`` (shape ``(..., 2K)``): the nearest +-v_c, as (label J, orientation tau, distance).

    The distance is ||omega - tau v_J||_2, the quantity Theorem 1 bounds by delta + C/R.
    """
    omega = np.asarray(omega, dtype=np.float64)
    rho = omega[..., K:]
    label = np.abs(rho).argmax(axis=-1)
    rho_j = np.take_along_axis(rho, label[..., None], axis=-1)[..., 0]
    tau = np.where(rho_j >= 0, 1, -1)
    # ||omega - tau v_J||^2 = 2 - 2 |rho_J| for unit omega
    dist = np.sqrt(np.maximum(0.0, 2.0 - 2.0 * np.abs(rho_j)))
    return label, tau, dist


def specialization_index(omega: np.ndarray, K: int) -> np.ndarray:
    """max_c rho_c^2 / sum_c rho_c^2 for rows of ``omega``: 1 for a one-cluster neuron, 1/s for s equal clusters."""
    rho2 = np.asarray(omega, dtype=np.float64)[..., K:] ** 2
    return rho2.max(axis=-1) / np.maximum(rho2.sum(axis=-1), 1e-300)


def _check_times(t_max: float, t_eval) -> np.ndarray:
    t_max = check_positive(t_max, "t_max")
    if t_eval is None:
        return np.linspace(0.0, float(t_max), 201)
    t_eval = np.asarray(t_eval, dtype=np.float64)
    if t_eval.ndim != 1 or t_eval.size < 1 or np.any(np.diff(t_eval) <= 0) or t_eval[0] < 0 or t_eval[-1] > t_max:
        raise ValueError("t_eval must be a strictly increasing 1-d array of times in [0, t_max]")
    return t_eval


def _check_unit_rows(omega0, K: int) -> np.ndarray:
    t, _ = _check_omega(omega0, K, unit=True)
    arr = t.detach().cpu().numpy().astype(np.float64)
    if arr.ndim != 2:
        raise ValueError(f"omega0 must have shape (m, {2 * K}), got {arr.shape}")
    return arr


# ------------------------------------------------------------------------- teacher-only flow
@dataclass(frozen=True)
class TeacherOnlyFlow:
    """Trajectories of eq. 18 for m independent neurons: ``t`` (T,), ``u`` (T, m), ``omega`` (T, m, 2K)."""

    t: np.ndarray
    u: np.ndarray
    omega: np.ndarray
    K: int
    R: float
    coeffs: dict = field(default_factory=lambda: {3: 1.0})
    nfev: int = 0

    @property
    def m(self) -> int:
        return int(self.u.shape[1])

    @property
    def b(self) -> np.ndarray:
        """(T, m, K) routing correlations b_c = R omega_c."""
        return self.R * self.omega[..., : self.K]

    @property
    def rho(self) -> np.ndarray:
        """(T, m, K) predictive correlations rho_c = omega_{K+c}."""
        return self.omega[..., self.K :]

    @property
    def phi(self) -> np.ndarray:
        """(T, m) Phi(omega_j(t)) (Lemma 3)."""
        return _phi_and_grad(self.omega, self.K, self.R, self.coeffs, np)[0]

    @property
    def zeta(self) -> np.ndarray:
        """(m,) self-selected signs sign(Phi(omega_j^0)) (Lemma 7)."""
        return np.where(self.phi[0] >= 0, 1, -1)

    def final(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(labels J, orientations tau, distances ||omega(t_end) - tau v_J||) of the last time."""
        return nearest_direction(self.omega[-1], self.K)

    def distance_to_maximizer(self) -> np.ndarray:
        """(m,) ||omega_j(t_end) - omega*(J_j, tau_j, zeta_j)||: how close each neuron ends to Lemma 5's point."""
        labels, taus, _ = self.final()
        target = np.stack(
            [specialized_maximizer(int(c), int(tau), int(z), self.K, self.R) for c, tau, z in zip(labels, taus, self.zeta)]
        )
        return np.linalg.norm(self.omega[-1] - target, axis=-1)

    def gradient_norm(self) -> np.ndarray:
        """(m,) ||grad_S Phi(omega_j(t_end))||: zero at convergence."""
        w = self.omega[-1]
        g = _phi_and_grad(w, self.K, self.R, self.coeffs, np)[1]
        return np.linalg.norm(g - w * (w * g).sum(-1, keepdims=True), axis=-1)


def _block_indices(m: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the m (d+1) x (d+1) Jacobian blocks of independent neurons, state
    [u_1..u_m, omega_1..omega_m] (omega_j in R^d), in the C order of an (m, d+1, d+1) array."""
    idx = np.stack([np.concatenate([[j], m + j * d + np.arange(d)]) for j in range(m)])  # (m, d+1)
    return np.repeat(idx, d + 1, axis=1).ravel(), np.tile(idx, (1, d + 1)).ravel()


def _teacher_rhs(K: int, R: float, coeffs: dict[int, float], m: int):
    d = 2 * K

    def rhs(_t: float, state: np.ndarray) -> np.ndarray:
        u, w = state[:m], state[m:].reshape(m, d)
        phi, g = _phi_and_grad(w, K, R, coeffs, np)
        sph = g - w * (w * g).sum(-1, keepdims=True)
        return np.concatenate([phi, (np.tanh(u)[:, None] * sph).ravel()])

    return rhs


def _teacher_jacobian_blocks(state: np.ndarray, K: int, R: float, coeffs: dict[int, float], m: int) -> np.ndarray:
    """(m, d+1, d+1) exact Jacobian of :func:`_teacher_rhs`, one block per neuron, in closed form.

    With g = grad Phi(w), H = hess Phi(w), P = g - w (w.g): d u'/d w = g, d w'/d u = sech^2(u) P,
    d w'/d w = tanh(u) (H - (w.g) I - w (g + H w)^T).
    """
    d = 2 * K
    u, w = state[:m], state[m:].reshape(m, d)
    _, g = _phi_and_grad(w, K, R, coeffs, np)
    hess = _euclidean_hessian_blocks(w, K, R, coeffs)
    wg = (w * g).sum(-1)
    proj = g - w * wg[:, None]
    jac = np.zeros((m, d + 1, d + 1))
    jac[:, 0, 1:] = g
    e = np.exp(-2.0 * np.abs(u))  # sech^2 u = 4 e^{-2|u|} / (1 + e^{-2|u|})^2, without overflow for large |u|
    jac[:, 1:, 0] = proj * (4.0 * e / (1.0 + e) ** 2)[:, None]
    inner = hess - wg[:, None, None] * np.eye(d) - w[:, :, None] * (g + np.einsum("mij,mj->mi", hess, w))[:, None, :]
    jac[:, 1:, 1:] = np.tanh(u)[:, None, None] * inner
    return jac


def _teacher_jac(K: int, R: float, coeffs: dict[int, float], m: int):
    rows, cols = _block_indices(m, 2 * K)
    shape = (m * (2 * K + 1),) * 2

    def jac(_t: float, state: np.ndarray) -> csr_matrix:
        return csr_matrix((_teacher_jacobian_blocks(state, K, R, coeffs, m).ravel(), (rows, cols)), shape=shape)

    return jac


def teacher_only_flow(
    omega0,
    K: int,
    R: float,
    t_max: float,
    *,
    t_eval: Sequence[float] | np.ndarray | None = None,
    coeffs: Mapping[int, float] | None = None,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    method: str = "BDF",
) -> TeacherOnlyFlow:
    """Integrate the teacher-only system of eq. 17/18 (Lemma 7) for every row of ``omega0``.

    ``omega0``: ``(m, 2K)`` unit rows; u(0) = 0. Returns a :class:`TeacherOnlyFlow` sampled at
    ``t_eval`` (default: 201 equally spaced times in [0, t_max]). ``coeffs`` selects a Hermite
    target other than the pure cubic (see :mod:`monosem.theory.correlation`); ``method`` is any
    ``solve_ivp`` method (default BDF, see the module docstring). The vector field is
    tangent to the sphere, so ||omega|| = 1 is conserved up to the integration tolerance (nothing
    renormalizes it: the tests use this as a check of the integrator).
    """
    K, R = _check_K(K), _check_R(R)
    coeffs = check_hermite_coeffs(coeffs)
    w0 = _check_unit_rows(omega0, K)
    t_eval = _check_times(t_max, t_eval)
    m = w0.shape[0]
    y0 = np.concatenate([np.zeros(m), w0.ravel()])
    extra = {"jac": _teacher_jac(K, R, coeffs, m)} if method in ("BDF", "Radau") else {}
    sol = solve_ivp(
        _teacher_rhs(K, R, coeffs, m), (0.0, float(t_max)), y0, method=method, t_eval=t_eval, rtol=rtol, atol=atol, **extra
    )
    if not sol.success:
        raise RuntimeError(f"teacher-only flow failed: {sol.message}")
    y = sol.y.T
    return TeacherOnlyFlow(t=sol.t, u=y[:, :m], omega=y[:, m:].reshape(-1, m, 2 * K), K=K, R=R, coeffs=coeffs, nfev=int(sol.nfev))


# --------------------------------------------------------------------------- full network
@dataclass(frozen=True)
class TwoLayerFlow:
    """Population gradient flow of the two-layer ReLU network (Lemma 9).

    ``a`` (T, m), ``w`` (T, m, 2K) in the original (unscaled) units; ``loss`` (T,) the population
    loss 1/2 E[(f - y)^2] (target part exact, interaction part on the fixed sample);
    ``interaction_rel_se``: largest standard error (over j) of the Monte-Carlo interaction term
    E_n[f relu(w_j x)], relative to the RMS size of these terms, at the last time.
    """

    t: np.ndarray
    a: np.ndarray
    w: np.ndarray
    eps: float
    K: int
    R: float
    loss: np.ndarray
    n_mc: int
    interaction_rel_se: float
    nfev: int
    coeffs: dict = field(default_factory=lambda: {3: 1.0})

    @property
    def u(self) -> np.ndarray:
        """(T, m) u_j = arsinh(a_j / eps)."""
        return np.arcsinh(self.a / self.eps)

    @property
    def omega(self) -> np.ndarray:
        """(T, m, 2K) directions w_j / ||w_j||."""
        return self.w / np.linalg.norm(self.w, axis=-1, keepdims=True)

    @property
    def invariant_error(self) -> np.ndarray:
        """(T,) max_j |(||w_j||^2 - a_j^2) - eps^2| / ||w_j||^2: zero along the exact flow.

        Relative to ||w_j||^2, the size of the two terms that cancel; RK4 conserves the quadratic
        invariant only up to its truncation error.
        """
        w2 = (self.w**2).sum(-1)
        return (np.abs(w2 - self.a**2 - self.eps**2) / w2).max(axis=1)

    def final(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(labels J, orientations tau, distances ||omega_j - tau v_J||) at the last time."""
        return nearest_direction(self.omega[-1], self.K)


#: below this many (sample point x neuron) numbers per array, a flow runs on the CPU even when a
#: GPU is asked for: every RK4 stage reads a few scalars back to the host (the curvature
#: estimate, the step size), and at these sizes those synchronizations and the kernel launches
#: cost more than the arithmetic (the cpu and smoke profiles: at most 5 x 4 096 points x 8 neurons)
_FLOW_GPU_MIN_NUMBERS = 1 << 22


def _flow_device(device: torch.device, points: int, m: int) -> torch.device:
    """Where a population flow computes: ``device``, except a CUDA device for tiny flows (the CPU)."""
    if device.type == "cuda" and points * m < _FLOW_GPU_MIN_NUMBERS:
        return torch.device("cpu")
    return device


class _TwoLayerField:
    """The vector field of the rescaled variables (alpha, W) = (a, w) / eps, evaluated by torch.

    ``interaction=False`` drops E[f relu] and E[f 1 x]: the (alpha, W) flow is then exactly the
    teacher-only system (eq. 18) written in the network's coordinates, integrated by the same
    steps -- the reference for the tracking error of Lemma 9.
    """

    def __init__(self, K, R, eps, m, coeffs, n_mc, seed, device, interaction=True):
        self.K, self.R, self.eps, self.m, self.coeffs = K, R, eps, m, coeffs
        self.d = 2 * K
        self.interaction = interaction
        self.device = _flow_device(get_device(device), K * n_mc, m)
        model = symmetric_mixture(K, R)
        x, _, c = model.sample(n_mc, seed, dtype=torch.float64)
        means = model.means.to(torch.float64)
        z = x - means[c]  # the Gaussian part; shared by every cluster below
        self.x = (means[:, None, :] + z[None, :, :]).reshape(K * n_mc, self.d).to(self.device)
        self.ey2 = sum(a * a for a in coeffs.values())
        # curvature scale of the teacher part: the largest |eigenvalue| of the spherical Hessian
        # at a specialized maximizer (the stiffest place the neurons go; it grows like R^2 / K)
        h_star, _ = spherical_hessian(specialized_maximizer(0, 1, 1, K, R), K, R, coeffs=coeffs)
        self.teacher_curvature = float(np.abs(np.linalg.eigvalsh(h_star)).max())
        self.x_curvature = 1.0 + R * R / K  # largest eigenvalue of E[x x^T]
        # sample points per block of interaction_terms: about 1 MB per (block x m) float64 array
        self.block = self.x.shape[0] if self.device.type == "cuda" else max(256, (1 << 17) // m)

    def teacher_part(self, state: torch.Tensor):
        """(alpha, W, E[y relu(W_j x)], its gradient in W_j): exact, from Lemma 3 and homogeneity."""
        m, d = self.m, self.d
        alpha, W = state[:m], state[m:].reshape(m, d)
        norms = W.norm(dim=1, keepdim=True)
        omega = W / norms
        phi, g = _phi_and_grad(omega, self.K, self.R, self.coeffs, torch)
        sph = g - omega * (omega * g).sum(-1, keepdim=True)
        return alpha, W, norms[:, 0] * phi, phi[:, None] * omega + sph

    def network(self, x: torch.Tensor, alpha: torch.Tensor, W: torch.Tensor):
        """Pre-activations, activations and the network output f (original units) at the points ``x``."""
        pre = x @ W.T  # (N, m)
        act = pre.clamp(min=0.0)
        return pre, act, self.eps * self.eps * (act @ alpha)

    def network_blocks(self, alpha: torch.Tensor, W: torch.Tensor):
        """(x, pre-activations, activations, f) over consecutive blocks of ``self.block`` sample points."""
        for start in range(0, self.x.shape[0], self.block):
            x = self.x[start : start + self.block]
            yield (x, *self.network(x, alpha, W))

    def interaction_terms(self, alpha: torch.Tensor, W: torch.Tensor):
        """Sample means E_n[f relu(W_j x)] (m,), E_n[f 1{W_j x > 0} x] (m, d) and trace E_n[relu relu^T].

        Accumulated over blocks of sample points: every (points x neurons) array then stays in
        the CPU cache instead of streaming several 150 MB arrays through memory per evaluation
        (measured 4.6x faster on 2 CPU cores at the paper profile's 3e5 points x 64 neurons; one block
        on a GPU).
        """
        n = self.x.shape[0]
        e_f_act = torch.zeros_like(alpha)
        e_f_x = torch.zeros_like(W)
        act_sq = 0.0
        for x, pre, act, f in self.network_blocks(alpha, W):
            e_f_act += act.T @ f
            e_f_x += torch.where(pre > 0, f[:, None], 0.0).T @ x
            act_sq += float(act.square().sum())
        return e_f_act / n, e_f_x / n, act_sq / n

    def __call__(self, state: torch.Tensor) -> tuple[torch.Tensor, float]:
        """(d state / dt, a curvature estimate L of the vector field at ``state``)."""
        alpha, W, cross, grad_cross = self.teacher_part(state)
        if self.interaction:
            e_f_act, e_f_x, act_sq = self.interaction_terms(alpha, W)
            d_alpha = cross - e_f_act
            d_W = alpha[:, None] * (grad_cross - e_f_x)
            gram_trace = self.eps**2 * act_sq  # trace E[relu relu^T] >= its top eigenvalue
            a_sq = self.eps**2 * float((alpha * alpha).max())
            curv = self.teacher_curvature + gram_trace + a_sq * self.x_curvature
        else:
            d_alpha, d_W = cross, alpha[:, None] * grad_cross
            curv = self.teacher_curvature
        return torch.cat([d_alpha, d_W.reshape(-1)]), curv

    def loss_and_se(self, state: torch.Tensor) -> tuple[float, float]:
        """(population loss 1/2 E[(f - y)^2], relative standard error of the interaction terms), in
        blocks of sample points like :meth:`interaction_terms`."""
        alpha, W, cross, _ = self.teacher_part(state)
        n = self.x.shape[0]
        f_sq, t_sum, t_sq = 0.0, torch.zeros_like(alpha), torch.zeros_like(alpha)
        for _, _, act, f in self.network_blocks(alpha, W):
            terms = act * f[:, None]  # samples of f relu(W_j x)
            f_sq += float(f.square().sum())
            t_sum += terms.sum(0)
            t_sq += terms.square().sum(0)
        e_yf = self.eps * self.eps * float(alpha @ cross)
        loss = 0.5 * self.ey2 - e_yf + 0.5 * f_sq / n
        mean = t_sum / n
        std = ((t_sq - n * mean.square()).clamp(min=0.0) / (n - 1)).sqrt()
        # largest standard error over neurons, relative to the RMS size of the interaction terms
        # (per-neuron ratios blow up for a neuron whose interaction term happens to be near zero)
        rms = float(mean.square().mean().sqrt())
        se = float((std / math.sqrt(n)).max())
        return loss, (se / rms if rms > 0 else 0.0)


def _rk4(field: _TwoLayerField, y: torch.Tensor, t_eval: np.ndarray, h_max: float, step: float | None):
    """Classical RK4 with h = min(h_max, 1 / L(y)), L the curvature estimate (fixed h if ``step``).

    Why not ``solve_ivp``: the Monte-Carlo interaction term jumps by f(x_i) x_i / N whenever a
    sample point crosses a neuron's hyperplane, and an embedded error estimator then shrinks the
    step to resolve every crossing (measured: 725 RK45 steps for t <= 100, far more later). The
    jumps are tiny and average out, so a fixed-order method whose step follows the curvature (RK4
    is stable for h L < 2.78) is both faster and accurate.
    """
    out, t, n_steps = [], 0.0, 0
    for target in t_eval:
        while target - t > 1e-12 * max(1.0, target):
            k1, curv = field(y)
            h = step if step is not None else min(h_max, 1.0 / curv)
            h = min(h, target - t)
            k2, _ = field(y + 0.5 * h * k1)
            k3, _ = field(y + 0.5 * h * k2)
            k4, _ = field(y + h * k3)
            y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            t += h
            n_steps += 1
        out.append(y.clone())
    return torch.stack(out), n_steps


def two_layer_population_flow(
    omega0,
    K: int,
    R: float,
    eps: float,
    t_max: float,
    *,
    t_eval: Sequence[float] | np.ndarray | None = None,
    n_mc: int = 20_000,
    seed: int = 0,
    coeffs: Mapping[int, float] | None = None,
    device: str | torch.device | None = None,
    h_max: float = 1.0,
    step: float | None = None,
    interaction: bool = True,
) -> TwoLayerFlow:
    """Population gradient flow of f(x) = sum_j a_j relu(w_j^T x) from a_j(0) = 0, w_j(0) = eps omega_j^0.

    Lemma 9's setting. The target cross term is exact (Lemma 3); the interaction term uses a fixed
    sample of ``n_mc`` Gaussian vectors per cluster (seed ``seed``) shared by the K clusters -- see
    the module docstring. Integrated by RK4 in float64 on ``device`` (default
    ``monosem.device.get_device()``; a CUDA device only when the (points x neurons) arrays hold at
    least ``_FLOW_GPU_MIN_NUMBERS`` numbers, smaller flows run on the CPU) with step min(h_max, 1/L), L the curvature estimate, or the
    fixed ``step``. ``interaction=False`` integrates the teacher-only system instead (same
    coordinates, same integrator). Returns a :class:`TwoLayerFlow` at ``t_eval`` (default 201
    equally spaced times in [0, t_max]).
    """
    K, R = _check_K(K), _check_R(R)
    coeffs = check_hermite_coeffs(coeffs)
    w0 = _check_unit_rows(omega0, K)
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating)) or not (0 < eps < 1):
        raise ValueError(f"eps={eps!r} must be a number in (0, 1) (the initialization scale)")
    n_mc = check_int(n_mc, "n_mc", 100, what="Monte-Carlo points per cluster")
    if not (h_max > 0) or (step is not None and not step > 0):
        raise ValueError("h_max and step must be positive")
    t_eval = _check_times(t_max, t_eval)
    m = w0.shape[0]
    field_ = _TwoLayerField(K, R, float(eps), m, coeffs, int(n_mc), seed, device, interaction=interaction)
    y0 = torch.cat([torch.zeros(m, dtype=torch.float64), torch.as_tensor(w0).reshape(-1)]).to(field_.device)
    ys, n_steps = _rk4(field_, y0, t_eval, float(h_max), step)
    losses = np.array([field_.loss_and_se(row)[0] for row in ys])
    rel_se = field_.loss_and_se(ys[-1])[1]
    y = ys.cpu().numpy()
    return TwoLayerFlow(
        t=t_eval.copy(), a=eps * y[:, :m], w=eps * y[:, m:].reshape(-1, m, 2 * K), eps=float(eps), K=K, R=R, loss=losses,
        n_mc=int(n_mc), interaction_rel_se=rel_se, nfev=4 * n_steps, coeffs=coeffs,
    )


def tracking_error(full: TwoLayerFlow, teacher) -> np.ndarray:
    """(m,) sup_t (|u_j - u_bar_j| + ||omega_j - omega_bar_j||) over the common time grid (Lemma 9).

    ``teacher`` is a :class:`TeacherOnlyFlow` or a :class:`TwoLayerFlow` run with
    ``interaction=False`` (anything with ``t``, ``u`` and ``omega``).
    """
    if full.t.shape != teacher.t.shape or not np.allclose(full.t, teacher.t):
        raise ValueError("full and teacher-only flows must be sampled at the same times")
    err = np.abs(full.u - teacher.u) + np.linalg.norm(full.omega - teacher.omega, axis=-1)
    return err.max(axis=0)
