"""One-hidden-layer MLPs of Section 3 / Appendices A.1-A.2: ReLU, GELU, ReGLU and SwiGLU.

An ordinary network computes

    f(x) = alpha * sum_j a_j phi(<w_j, x> + b_j) + a_0,          phi = ReLU or GELU,

and a gated one (Shazeer 2020)

    f(x) = alpha * sum_j a_j phi(<w_{g,j}, x> + b_{g,j}) (<w_{v,j}, x> + b_{v,j}) + a_0,

with phi = ReLU (ReGLU) or SiLU (SwiGLU). Every weight and bias is trainable (Appendix A.1).

The explicit mixture of experts the specialized dense networks are compared with
(:class:`MoE`, :class:`MoEStack`: top-1 routing and load balancing of the Switch Transformer)
and the parameter / FLOP accounting that matches a dense width to it (:func:`parameter_count`,
:func:`forward_flops`, :func:`matched_dense_width`) are at the end of this module.

Parameterization and initialization
-----------------------------------
The paper trains under a "balanced feature-learning initialization" and a "width-aware
parameterization" without defining either. Our reading (stated again on the Section 3.1 page):

* hidden weights and biases: PyTorch's default ``nn.Linear`` initialization,
  ``U(-1/sqrt(d), 1/sqrt(d))`` (so every pre-activation has an O(1) scale whatever the width),
  times ``hidden_scale`` (1 by default);
* readout ``a`` and output bias ``a_0``: **zero**. This is the initialization of the paper's own
  theory (Lemma 9, "early-time tracking from a zero output layer"): the output starts at 0, the
  first Adam steps grow the readout and the hidden weights together, and no random readout pins
  the hidden features to their initial values;
* ``alpha`` (``output_scale``) = 1. Multiplying the output by alpha >> 1 and dividing Adam's
  learning rate by alpha is the lazy-training scaling of Chizat, Oyallon & Bach (2019): the
  function learns at the same speed while every weight moves alpha times less, i.e. the
  kernel (NTK) regime. The Section 3.1 page uses it as the initialization ablation.

All ``n_models`` networks of one :class:`MLPStack` share the architecture and are otherwise
independent: their parameters carry a leading model axis and one batched matmul (``baddbmm`` /
``bmm``) evaluates all of them, which is what lets a sweep of seeds and learning rates fill a GPU.
:class:`MLP` is the single network the analysis code looks at; ``MLPStack.unstack`` and
``MLPStack.from_models`` convert between the two.

One module for every architecture the paper trains (and the mixture of experts they are compared
with): they share the parameter layout, the initializations and the stacked evaluation, which
split apart would be imported back and forth.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .checks import check_choice, check_int, check_nonnegative, check_positive
from .device import get_device, resolve_dtype, torch_generator

__all__ = [
    "ACTIVATIONS",
    "AUX_WEIGHT",
    "GATED",
    "INITS",
    "MLP",
    "MLPStack",
    "MoE",
    "MoEStack",
    "ROUTER_SCALE",
    "forward_flops",
    "init_moe_parameters",
    "init_parameters",
    "load_balancing_loss",
    "matched_dense_width",
    "mup_readout_lr_scale",
    "parameter_count",
]

#: The four architectures, by name.
ACTIVATIONS = ("relu", "gelu", "reglu", "swiglu")
#: The gated ones (hidden representation phi(W_g x + b_g) * (W_v x + b_v)).
GATED = ("reglu", "swiglu")

_PHI = {"relu": F.relu, "gelu": F.gelu, "reglu": F.relu, "swiglu": F.silu}


#: The initializations, by name (see :func:`init_parameters`): ``"pytorch"`` (the default, zero
#: readout), ``"balanced"`` and ``"standard"``.
INITS = ("pytorch", "balanced", "standard")


def _check_architecture(d: int, width: int, activation: str) -> None:
    check_choice(activation, "activation", ACTIVATIONS)
    check_int(d, "d")
    check_int(width, "width")


def init_parameters(
    d: int,
    width: int,
    activation: str,
    seed: int,
    *,
    hidden_scale: float = 1.0,
    init: str = "pytorch",
    dtype: torch.dtype | str | None = None,
) -> dict[str, torch.Tensor]:
    """Initial parameters of one network.

    ``init="pytorch"`` (the default; see the module docstring): hidden weights and biases
    ``U(-1/sqrt(d), 1/sqrt(d))`` times ``hidden_scale``, readout zero.

    ``init="balanced"``: one reading of the paper's "balanced feature-learning initialization".
    Section 4.1 uses that gradient flow conserves ``||(w_j, b_j)||^2 - a_j^2`` for a ReLU unit (it
    is positively homogeneous); *balanced* starts that difference at 0: the hidden rows are drawn
    as above and the readout is ``a_j = s_j ||(w_j, b_j)||`` with a random sign ``s_j``. A gated
    unit ``a_j phi(g_j) v_j`` is homogeneous in each of (gate row, value row, readout), whose three
    squared norms then move together, so the value row is also rescaled to the gate row's norm.
    For GELU and SwiGLU the same construction is applied although the conservation is only
    approximate.

    ``init="standard"``: PyTorch's ``nn.Linear`` default for the readout too, ``a_j ~
    U(-1/sqrt(width), 1/sqrt(width))`` times ``hidden_scale`` (every weight scaled alike); the output
    bias stays zero. Meant with a small ``hidden_scale`` (the output at init is of order
    ``hidden_scale^2 sqrt(width)``). Figure 1's networks use it with ``hidden_scale=0.1``
    (:data:`monosem.experiments.questions.figure1.base.FIGURE1_READING`: the Section 3.1 readings ablation
    found it closest to the paper's table); the Appendix A.2 sweeps keep ``"pytorch"``, the
    default here, which that ablation does not speak to.

    Returns ``W`` (H, d), ``b`` (H,), ``a`` (width,), ``a0`` () with H = width, or 2*width for a
    gated network (gate rows first, then value rows). Drawn on the CPU in float64 from
    ``torch_generator(seed)`` and then cast, so the same seed gives the same network on every
    device and in every stack.
    """
    _check_architecture(d, width, activation)
    check_positive(hidden_scale, "hidden_scale")
    check_choice(init, "init", INITS)
    dt = resolve_dtype(dtype)
    H = 2 * width if activation in GATED else width
    gen = torch_generator(seed)
    bound = hidden_scale / math.sqrt(d)
    W = (torch.rand(H, d, generator=gen, dtype=torch.float64) * 2 - 1) * bound
    b = (torch.rand(H, generator=gen, dtype=torch.float64) * 2 - 1) * bound
    a = torch.zeros(width, dtype=torch.float64)
    if init == "balanced":  # drawn after W and b, so the hidden rows are those of "pytorch"
        sign = torch.randint(0, 2, (width,), generator=gen, dtype=torch.float64) * 2 - 1
        norm = torch.sqrt(W[:width].square().sum(1) + b[:width].square())
        if activation in GATED:
            value_norm = torch.sqrt(W[width:].square().sum(1) + b[width:].square())
            W[width:] *= (norm / value_norm).unsqueeze(1)
            b[width:] *= norm / value_norm
        a = sign * norm
    elif init == "standard":  # drawn after W and b, so the hidden rows are those of "pytorch"
        a = (torch.rand(width, generator=gen, dtype=torch.float64) * 2 - 1) * hidden_scale / math.sqrt(width)
    return {"W": W.to(dt), "b": b.to(dt), "a": a.to(dt), "a0": torch.zeros((), dtype=dt)}


def mup_readout_lr_scale(width: int, base_width: int) -> float:
    """The maximal-update (muP) reading of the paper's "width-aware parameterization", for Adam
    and one hidden layer (Yang et al., Tensor Programs IV/V: under Adam the input weights and
    biases keep a width-independent rate, the readout's rate scales as 1/fan_in = 1/width, and the
    readout starts at zero as here). ``base_width`` is the width at which the learning rates were
    tuned (the paper's: 2 048 for Appendix A.1, 4 096 for A.2), so at that width muP is the plain
    parameterization and a narrower network's readout rate grows by ``base_width / width``. For
    two-layer networks muP and the mean-field parameterization describe the same limit."""
    check_int(width, "width")
    check_int(base_width, "base_width")
    return base_width / width


def _take_model(stack, i: int, model):
    """Copy model ``i`` of a stack's parameters into the single ``model`` (``param_names``)."""
    with torch.no_grad():
        for name in stack.param_names:
            getattr(model, name).copy_(getattr(stack, name)[i])
    return model


def _fill_stack(stack, models):
    """Copy the current parameters of ``models`` into ``stack``, model ``i`` at index ``i``."""
    with torch.no_grad():
        for name in stack.param_names:
            getattr(stack, name).copy_(torch.stack([getattr(m, name).detach() for m in models]))
    return stack


def _shape_of(m) -> tuple:
    return (m.d, m.width, m.activation, m.output_scale, m.hidden_scale, m.init, m.readout_lr_scale)


def _hidden(pre: torch.Tensor, activation: str, width: int) -> torch.Tensor:
    """Hidden representation from pre-activations ``(..., H)``."""
    phi = _PHI[activation]
    if activation in GATED:
        return phi(pre[..., :width]) * pre[..., width:]
    return phi(pre)


class MLP(nn.Module):
    """One one-hidden-layer network (Appendix A.1): ``MLP(d, width, activation)``.

    Parameters ``W`` (H, d), ``b`` (H,), ``a`` (width,), ``a0`` (); H = 2*width for gated nets.
    ``forward(x)`` maps ``(n, d)`` to ``(n,)``.
    """

    #: the trainable tensors, in the order the training loop and its checkpoints list them
    param_names: tuple[str, ...] = ("W", "b", "a", "a0")

    def __init__(
        self,
        d: int,
        width: int,
        activation: str,
        *,
        seed: int = 0,
        hidden_scale: float = 1.0,
        output_scale: float = 1.0,
        init: str = "pytorch",
        readout_lr_scale: float = 1.0,
        dtype: torch.dtype | str | None = None,
        device: str | torch.device | None = None,
    ) -> None:
        super().__init__()
        p = init_parameters(d, width, activation, seed, hidden_scale=hidden_scale, init=init, dtype=dtype)
        self.init = init
        self.readout_lr_scale = check_positive(readout_lr_scale, "readout_lr_scale")
        dev = get_device(device)
        self.d, self.width, self.activation, self.seed = d, width, activation, int(seed)
        self.hidden_scale = float(hidden_scale)
        self.output_scale = check_positive(output_scale, "output_scale")
        for name, value in p.items():
            setattr(self, name, nn.Parameter(value.to(dev)))

    @property
    def gated(self) -> bool:
        return self.activation in GATED

    def branches(self) -> dict[str, torch.Tensor]:
        """First-layer weight matrices by branch name: ``{"relu": W}`` or ``{"reglu gate": W_g,
        "reglu value": W_v}``; each is ``(width, d)``."""
        W = self.W.detach()
        if self.gated:
            return {f"{self.activation} gate": W[: self.width], f"{self.activation} value": W[self.width :]}
        return {self.activation: W}

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """Hidden representation h(x), ``(n, width)``."""
        return _hidden(torch.addmm(self.b, x, self.W.T), self.activation, self.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 2 or x.shape[1] != self.d:
            raise ValueError(f"x must have shape (n, {self.d}), got {tuple(x.shape)}")
        return self.output_scale * (self.hidden(x) @ self.a) + self.a0

    def extra_repr(self) -> str:
        return f"d={self.d}, width={self.width}, activation={self.activation!r}, output_scale={self.output_scale:g}"


class MLPStack(nn.Module):
    """``n_models`` independent networks of one architecture, evaluated with batched matmuls.

    Parameters carry a leading model axis: ``W`` (M, H, d), ``b`` (M, H), ``a`` (M, width),
    ``a0`` (M,). ``forward(x)`` takes ``(n, d)`` (the same inputs for every model) or
    ``(M, n, d)`` (one batch per model) and returns ``(M, n)``. Model ``i`` is initialized from
    ``seeds[i]`` exactly as ``MLP(..., seed=seeds[i])``.

    ``kernel``: ``"bmm"`` evaluates all models with batched matmuls (``baddbmm`` / ``bmm``, the
    fast path on a GPU), ``"loop"`` one model after the other (faster on a CPU, where PyTorch's
    batched kernels are slow), ``"auto"`` (default) picks ``"bmm"`` on accelerators and ``"loop"``
    on the CPU. Both compute the same function.
    """

    #: the trainable tensors, in the order the training loop and its checkpoints list them
    param_names: tuple[str, ...] = ("W", "b", "a", "a0")

    def __init__(
        self,
        d: int,
        width: int,
        activation: str,
        seeds: Sequence[int],
        *,
        hidden_scale: float = 1.0,
        output_scale: float = 1.0,
        kernel: str = "auto",
        init: str = "pytorch",
        readout_lr_scale: float = 1.0,
        dtype: torch.dtype | str | None = None,
        device: str | torch.device | None = None,
    ) -> None:
        super().__init__()
        if kernel not in ("auto", "bmm", "loop"):
            check_choice(kernel, "kernel", ("auto", "bmm", "loop"))
        self.kernel = kernel
        seeds = list(seeds)
        if not seeds:
            raise ValueError("seeds must name at least one model")
        _check_architecture(d, width, activation)
        dev = get_device(device)
        params = [init_parameters(d, width, activation, s, hidden_scale=hidden_scale, init=init, dtype=dtype) for s in seeds]
        self.init = init
        self.readout_lr_scale = check_positive(readout_lr_scale, "readout_lr_scale")
        self.d, self.width, self.activation = d, width, activation
        self.hidden_scale = float(hidden_scale)
        self.output_scale = check_positive(output_scale, "output_scale")
        self.seeds = tuple(int(s) for s in seeds)
        for name in ("W", "b", "a", "a0"):
            setattr(self, name, nn.Parameter(torch.stack([p[name] for p in params]).to(dev)))

    @property
    def n_models(self) -> int:
        return int(self.W.shape[0])

    @property
    def gated(self) -> bool:
        return self.activation in GATED

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shared = x.ndim == 2
        if not shared and (x.ndim != 3 or x.shape[0] != self.n_models) or x.shape[-1] != self.d:
            raise ValueError(f"x must have shape (n, {self.d}) or ({self.n_models}, n, {self.d}), got {tuple(x.shape)}")
        if self._use_loop():
            # CPU: PyTorch's batched kernels (bmm with a transposed operand, batched
            # matrix-vector products in the backward pass) run several times slower per model than
            # plain matrix products there, so the models are evaluated one after the other.
            outs = []
            for i in range(self.n_models):
                xi = x if shared else x[i]
                h = _hidden(torch.addmm(self.b[i], xi, self.W[i].T), self.activation, self.width)
                outs.append(self.output_scale * (h @ self.a[i]) + self.a0[i])
            return torch.stack(outs)
        if shared:
            x = x.unsqueeze(0).expand(self.n_models, -1, -1)
        pre = torch.baddbmm(self.b.unsqueeze(1), x, self.W.transpose(1, 2))
        h = _hidden(pre, self.activation, self.width)
        return self.output_scale * torch.bmm(h, self.a.unsqueeze(2)).squeeze(2) + self.a0.unsqueeze(1)

    def _use_loop(self) -> bool:
        if self.kernel == "auto":
            return self.W.device.type == "cpu"
        return self.kernel == "loop"

    def unstack(self) -> list[MLP]:
        """The ``n_models`` networks as separate :class:`MLP` objects (copies)."""
        return [_take_model(self, i, MLP(self.d, self.width, self.activation, seed=self.seeds[i], hidden_scale=self.hidden_scale,
                                         output_scale=self.output_scale, init=self.init, readout_lr_scale=self.readout_lr_scale,
                                         dtype=self.W.dtype, device=self.W.device))
                for i in range(self.n_models)]

    @classmethod
    def from_models(cls, models: Sequence[MLP]) -> "MLPStack":
        """Stack networks of one architecture (copies of their current parameters)."""
        if not models:
            raise ValueError("models must not be empty")
        m0 = models[0]
        for m in models:
            if _shape_of(m) != _shape_of(m0):
                raise ValueError("models must share d, width, activation, hidden_scale, output_scale, init and readout_lr_scale")
        stack = cls(m0.d, m0.width, m0.activation, [m.seed for m in models], hidden_scale=m0.hidden_scale, output_scale=m0.output_scale,
                    init=m0.init, readout_lr_scale=m0.readout_lr_scale, dtype=m0.W.dtype, device=m0.W.device)
        return _fill_stack(stack, models)

    def extra_repr(self) -> str:
        return f"n_models={self.n_models}, d={self.d}, width={self.width}, activation={self.activation!r}, output_scale={self.output_scale:g}"


# --------------------------------------------------------------------------------------------
# An explicit top-1 mixture of experts
# --------------------------------------------------------------------------------------------

#: Weight of the load-balancing auxiliary loss: alpha = 10^-2, the Switch Transformer's value
#: (Fedus, Zoph & Shazeer 2022, JMLR, Section 2.2: "sufficiently large to ensure load balancing
#: while small enough to not overwhelm the primary cross-entropy objective").
AUX_WEIGHT = 0.01
#: Scale of the router's initial weights, relative to PyTorch's default ``U(-1/sqrt(d), 1/sqrt(d))``
#: (see :func:`init_moe_parameters`).
ROUTER_SCALE = 0.1

_KINDS = ("mlp", "moe")


def _check_moe_architecture(d: int, width: int, activation: str, n_experts: int) -> None:
    _check_architecture(d, width, activation)
    check_int(n_experts, "n_experts")


def init_moe_parameters(
    d: int,
    width: int,
    activation: str,
    n_experts: int,
    seed: int,
    *,
    hidden_scale: float = 1.0,
    router_scale: float = ROUTER_SCALE,
    dtype: torch.dtype | str | None = None,
) -> dict[str, torch.Tensor]:
    """Initial parameters of one mixture of ``n_experts`` = E experts of width ``width`` = m.

    * experts: the :class:`MLP` convention (module docstring): hidden weights and biases
      ``U(-1/sqrt(d), 1/sqrt(d))`` times ``hidden_scale``, readouts ``a`` and output biases ``a0``
      zero. Drawn first, all of expert 0's rows, then expert 1's, ..., then the biases, from
      ``torch_generator(seed)``: with E = 1 the expert is bit for bit ``init_parameters(d, width,
      activation, seed)``'s network.
    * router: weights ``U(-s/sqrt(d), s/sqrt(d))`` with ``s = router_scale`` (0.1 by default),
      drawn after the experts; bias zero. Why random and small: a zero router makes every logit
      equal, so the argmax ties and every example goes to expert 0 (PyTorch's argmax returns the
      first maximum). Nothing would break that tie, since at init the readouts are zero, so the
      squared error has no gradient through the router; only the load-balancing loss pushes it.
      Small random weights break the tie with a random linear partition of the input space. The
      probabilities then start almost uniform (p_e = 1/E + O(s)), so no expert's output is
      scaled down at the start. The Switch Transformer does something similar: it shrinks its
      initialization scale 10x, to s = 0.1 (Fedus et al. 2022, Section 2.4; they draw a truncated
      normal of variance s/fan_in for every weight, we draw the uniform above, for the router
      only).

    Returns ``R`` (E, d), ``c`` (E,), ``W`` (E, H, d), ``b`` (E, H), ``a`` (E, m), ``a0`` (E,),
    with H = m, or 2m for a gated expert (gate rows first). Drawn on the CPU in float64 and then
    cast, as :func:`init_parameters`.
    """
    _check_moe_architecture(d, width, activation, n_experts)
    check_positive(hidden_scale, "hidden_scale")
    check_positive(router_scale, "router_scale")
    dt = resolve_dtype(dtype)
    H = 2 * width if activation in GATED else width
    gen = torch_generator(seed)
    bound = hidden_scale / math.sqrt(d)
    W = (torch.rand(n_experts, H, d, generator=gen, dtype=torch.float64) * 2 - 1) * bound
    b = (torch.rand(n_experts, H, generator=gen, dtype=torch.float64) * 2 - 1) * bound
    R = (torch.rand(n_experts, d, generator=gen, dtype=torch.float64) * 2 - 1) * (router_scale / math.sqrt(d))
    return {
        "R": R.to(dt), "c": torch.zeros(n_experts, dtype=dt), "W": W.to(dt), "b": b.to(dt),
        "a": torch.zeros(n_experts, width, dtype=dt), "a0": torch.zeros(n_experts, dtype=dt),
    }


def load_balancing_loss(probs: torch.Tensor, expert_index: torch.Tensor, n_experts: int) -> torch.Tensor:
    """The Switch Transformer's auxiliary load-balancing loss (Fedus et al. 2022, eq. 4-6):
    ``E * sum_e frac_e * P_e``, where ``frac_e`` is the fraction of the batch dispatched to expert
    e and ``P_e`` the batch mean of its router probability.

    ``probs`` is ``(..., n, E)``, ``expert_index`` ``(..., n)``; returns ``(...)``. It is 1 under
    perfectly balanced dispatch with uniform probabilities and at most E (all of the batch sent
    to one expert with probability 1). ``frac`` is piecewise constant, so, as in the paper, the
    gradient reaches the router through ``P`` only.
    """
    check_int(n_experts, "n_experts")
    if probs.shape[-1] != n_experts or probs.shape[:-1] != expert_index.shape:
        raise ValueError(f"probs must be (..., n, {n_experts}) and expert_index (..., n), got {tuple(probs.shape)} and {tuple(expert_index.shape)}")
    frac = F.one_hot(expert_index, n_experts).to(probs.dtype).mean(dim=-2)
    return n_experts * (frac * probs.mean(dim=-2)).sum(dim=-1)


def _moe_core(R, c, W, b, a, a0, x: torch.Tensor, activation: str, width: int):
    """Output, router probabilities and expert indices of one mixture (2-D ``W``... per expert)
    or of a stack of them (a leading model axis); ``x`` is ``(n, d)`` or ``(M, n, d)``.

    Every expert's pre-activations are computed (one product with all E*H rows, i.e. the cost of
    a dense layer of width E*m) and only the routed expert's are kept; the activation and the
    readout then run on the selected rows only. The gradient reaches the selected expert alone
    (through ``gather``), as under a true dispatch.
    """
    E, H, d = W.shape[-3:]
    lead = W.shape[:-3]
    # logits in (..., E, n) layout: PyTorch's CPU softmax (and its backward) over a short last
    # axis is several times slower than over the leading one
    logits = torch.matmul(R, x.transpose(-1, -2)) + c.unsqueeze(-1)  # (..., E, n)
    probs = torch.softmax(logits, dim=-2)
    # argmax of the logits, not of the probabilities: the same expert (softmax is monotone)
    # without the ties that rounding in softmax could create. ``max(...).indices`` is argmax
    # (the first maximum on ties), several times faster than ``argmax`` over a leading axis
    idx = logits.max(dim=-2).indices  # (..., n)
    pre = torch.matmul(x, W.reshape(*lead, E * H, d).transpose(-1, -2)) + b.reshape(*lead, 1, E * H)  # (..., n, E*H)
    # the routed expert's H columns of each row (one gather along the last axis: the fastest of
    # the equivalent selections on a CPU, forward and backward)
    cols = (idx * H).unsqueeze(-1) + torch.arange(H, device=idx.device)  # (..., n, H)
    h = _hidden(pre.gather(-1, cols), activation, width)  # (..., n, m)
    sel = idx.unsqueeze(-1)  # (..., n, 1)
    g = (h * a.gather(-2, sel.expand(*idx.shape, width))).sum(dim=-1) + a0.gather(-1, idx)
    return probs.gather(-2, idx.unsqueeze(-2)).squeeze(-2) * g, probs.transpose(-1, -2), idx


class _MoEBase(nn.Module):
    """What :class:`MoE` and :class:`MoEStack` share: the settings, the routing queries and the
    accounting. Subclasses provide ``_parts(x) -> (output, probs, expert_index)``."""

    #: the trainable tensors, in the order the training loop and its checkpoints list them
    param_names: tuple[str, ...] = ("R", "c", "W", "b", "a", "a0")

    def _setup(self, d: int, width: int, activation: str, n_experts: int, aux_weight: float, router_scale: float, hidden_scale: float) -> None:
        _check_moe_architecture(d, width, activation, n_experts)
        self.d, self.width, self.activation, self.n_experts = d, width, activation, n_experts
        self.aux_weight = check_nonnegative(aux_weight, "aux_weight")
        self.router_scale = check_positive(router_scale, "router_scale")
        self.hidden_scale = check_positive(hidden_scale, "hidden_scale")

    def _parts(self, x: torch.Tensor):  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def gated(self) -> bool:
        return self.activation in GATED

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``f(x) = p_{e*}(x) g_{e*}(x)``, e* = argmax_e p_e(x) (top-1 routing)."""
        return self._parts(x)[0]

    def forward_and_aux(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The output and the load-balancing loss of the batch ``x``, from one evaluation (what a
        training step needs)."""
        out, probs, idx = self._parts(x)
        return out, load_balancing_loss(probs, idx, self.n_experts)

    def router_probs(self, x: torch.Tensor) -> torch.Tensor:
        """Router probabilities ``softmax(x R^T + c)``, ``(..., n, E)``."""
        return self._parts(x)[1]

    @torch.no_grad()
    def route(self, x: torch.Tensor) -> torch.Tensor:
        """The expert each example is dispatched to, ``(..., n)`` (int64): e.g. to compare the
        router's partition with the data's clusters (adjusted Rand index)."""
        return self._parts(x)[2]

    def aux_loss(self, x: torch.Tensor) -> torch.Tensor:
        """The Switch Transformer's load-balancing loss of the batch ``x`` (unweighted;
        :func:`load_balancing_loss`)."""
        return self.forward_and_aux(x)[1]

    def n_parameters(self) -> int:
        """Trainable parameters of one mixture (:func:`parameter_count`)."""
        return parameter_count("moe", self.d, self.width, self.activation, self.n_experts)

    def forward_flops(self) -> int:
        """Matmul FLOPs per example of the routed computation (:func:`forward_flops`)."""
        return forward_flops("moe", self.d, self.width, self.activation, self.n_experts)

    def _settings(self) -> tuple:
        return (self.d, self.width, self.activation, self.n_experts, self.aux_weight, self.router_scale, self.hidden_scale)


class MoE(_MoEBase):
    """One top-1 mixture of experts: ``MoE(d, width, activation, n_experts)``.

    A sparsely gated mixture (Shazeer et al. 2017, "Outrageously large neural networks") with the
    Switch Transformer's top-1 routing (Fedus, Zoph & Shazeer 2022, JMLR): router logits
    ``x R^T + c``, probabilities ``p = softmax(logits)``, ``e*(x) = argmax_e p_e(x)`` and

        f(x) = p_{e*}(x) g_{e*}(x),     g_e(x) = sum_j a_{e,j} h_{e,j}(x) + a0_e,

    each expert ``g_e`` a one-hidden-layer network of width m with one of :data:`ACTIVATIONS`
    (:class:`MLP`'s hidden representation ``h``). Multiplying by ``p_{e*}`` is what gives the
    router a gradient from the squared error. The training objective is ``MSE + aux_weight *
    aux`` with the load-balancing loss ``aux`` (:func:`load_balancing_loss`); ``aux_weight``
    defaults to the Switch Transformer's 0.01 (:data:`AUX_WEIGHT`).

    Implementation: every expert's first layer is evaluated on every example (one product with
    E*m, or 2E*m, rows) and the routed expert's pre-activations are selected; activation and
    readout run on the selected rows only. A step costs a dense layer of width E*m plus a
    gather, not the 1/E of it that a true dispatch (sorting the examples by expert) would do, but
    it is a few vectorized kernels with no data-dependent shapes, so a stack runs at once
    on a GPU. The function and its gradient are those of a true dispatch: only the routed expert
    contributes to the output and receives gradient. :func:`forward_flops` counts the routed
    computation.

    Parameters ``R`` (E, d), ``c`` (E,), ``W`` (E, H, d), ``b`` (E, H), ``a`` (E, m), ``a0``
    (E,), H = 2m for gated experts; initialization :func:`init_moe_parameters`.
    ``forward(x)`` maps ``(n, d)`` to ``(n,)``.
    """

    def __init__(
        self,
        d: int,
        width: int,
        activation: str,
        n_experts: int,
        *,
        seed: int = 0,
        aux_weight: float = AUX_WEIGHT,
        router_scale: float = ROUTER_SCALE,
        hidden_scale: float = 1.0,
        dtype: torch.dtype | str | None = None,
        device: str | torch.device | None = None,
    ) -> None:
        super().__init__()
        self._setup(d, width, activation, n_experts, aux_weight, router_scale, hidden_scale)
        p = init_moe_parameters(d, width, activation, n_experts, seed, hidden_scale=hidden_scale, router_scale=router_scale, dtype=dtype)
        dev = get_device(device)
        self.seed = int(seed)
        for name in self.param_names:
            setattr(self, name, nn.Parameter(p[name].to(dev)))

    def _parts(self, x: torch.Tensor):
        if x.ndim != 2 or x.shape[1] != self.d:
            raise ValueError(f"x must have shape (n, {self.d}), got {tuple(x.shape)}")
        return _moe_core(*(getattr(self, n) for n in self.param_names), x, self.activation, self.width)

    def extra_repr(self) -> str:
        return f"d={self.d}, width={self.width}, activation={self.activation!r}, n_experts={self.n_experts}, aux_weight={self.aux_weight:g}"


class MoEStack(_MoEBase):
    """``n_models`` independent top-1 mixtures of experts (:class:`MoE`) of one architecture.

    Parameters carry a leading model axis: ``R`` (M, E, d), ``c`` (M, E), ``W`` (M, E, H, d),
    ``b`` (M, E, H), ``a`` (M, E, m), ``a0`` (M, E). ``forward(x)`` takes ``(n, d)`` (shared
    inputs) or ``(M, n, d)`` and returns ``(M, n)``; ``route`` returns ``(M, n)`` expert
    indices, ``aux_loss`` ``(M,)``. Model ``i`` is initialized from ``seeds[i]`` exactly as
    ``MoE(..., seed=seeds[i])``. ``kernel`` as in :class:`MLPStack` (``"auto"``: one model after
    the other on the CPU, batched products elsewhere). Trainable by :func:`monosem.train.train`
    (through autograd; objective MSE + ``aux_weight`` * aux, reported MSE plain).
    """

    def __init__(
        self,
        d: int,
        width: int,
        activation: str,
        n_experts: int,
        seeds: Sequence[int],
        *,
        aux_weight: float = AUX_WEIGHT,
        router_scale: float = ROUTER_SCALE,
        hidden_scale: float = 1.0,
        kernel: str = "auto",
        dtype: torch.dtype | str | None = None,
        device: str | torch.device | None = None,
    ) -> None:
        super().__init__()
        self.kernel = check_choice(kernel, "kernel", ("auto", "bmm", "loop"))
        seeds = list(seeds)
        if not seeds:
            raise ValueError("seeds must name at least one model")
        self._setup(d, width, activation, n_experts, aux_weight, router_scale, hidden_scale)
        params = [init_moe_parameters(d, width, activation, n_experts, s, hidden_scale=hidden_scale, router_scale=router_scale, dtype=dtype) for s in seeds]
        dev = get_device(device)
        self.seeds = tuple(int(s) for s in seeds)
        for name in self.param_names:
            setattr(self, name, nn.Parameter(torch.stack([p[name] for p in params]).to(dev)))

    @property
    def n_models(self) -> int:
        return int(self.W.shape[0])

    def _use_loop(self) -> bool:
        if self.kernel == "auto":
            return self.W.device.type == "cpu"
        return self.kernel == "loop"

    def _parts(self, x: torch.Tensor):
        shared = x.ndim == 2
        if not shared and (x.ndim != 3 or x.shape[0] != self.n_models) or x.shape[-1] != self.d:
            raise ValueError(f"x must have shape (n, {self.d}) or ({self.n_models}, n, {self.d}), got {tuple(x.shape)}")
        params = [getattr(self, n) for n in self.param_names]
        if self._use_loop():
            # CPU: plain matrix products one model at a time beat batched ones (see MLPStack)
            parts = [_moe_core(*(p[i] for p in params), x if shared else x[i], self.activation, self.width) for i in range(self.n_models)]
            return tuple(torch.stack(t) for t in zip(*parts))
        return _moe_core(*params, x, self.activation, self.width)

    def unstack(self) -> list[MoE]:
        """The ``n_models`` mixtures as separate :class:`MoE` objects (copies)."""
        return [_take_model(self, i, MoE(self.d, self.width, self.activation, self.n_experts, seed=self.seeds[i],
                                         aux_weight=self.aux_weight, router_scale=self.router_scale,
                                         hidden_scale=self.hidden_scale, dtype=self.W.dtype, device=self.W.device))
                for i in range(self.n_models)]

    @classmethod
    def from_models(cls, models: Sequence[MoE]) -> "MoEStack":
        """Stack mixtures of one architecture (copies of their current parameters)."""
        if not models:
            raise ValueError("models must not be empty")
        m0 = models[0]
        if any(m._settings() != m0._settings() for m in models):
            raise ValueError("models must share d, width, activation, n_experts, aux_weight, router_scale and hidden_scale")
        stack = cls(m0.d, m0.width, m0.activation, m0.n_experts, [m.seed for m in models], aux_weight=m0.aux_weight,
                    router_scale=m0.router_scale, hidden_scale=m0.hidden_scale, dtype=m0.W.dtype, device=m0.W.device)
        return _fill_stack(stack, models)

    def extra_repr(self) -> str:
        return (f"n_models={self.n_models}, d={self.d}, width={self.width}, activation={self.activation!r}, "
                f"n_experts={self.n_experts}, aux_weight={self.aux_weight:g}")


# --------------------------------------------------------------------------------------------
# Accounting: parameters and forward FLOPs of a dense network and of a mixture
# --------------------------------------------------------------------------------------------


def _check_kind(kind: str, n_experts: int | None) -> None:
    check_choice(kind, "kind", _KINDS)
    if kind == "moe":
        if n_experts is None:
            raise ValueError("n_experts must be given for kind='moe'")
        check_int(n_experts, "n_experts")
    elif n_experts is not None:
        raise ValueError(f"n_experts={n_experts!r} is only for kind='moe'; leave it None for kind='mlp'")


def parameter_count(kind: str, d: int, width: int, activation: str, n_experts: int | None = None) -> int:
    """Trainable parameters of one network: ``kind="mlp"``, one :class:`MLPStack` model,
    ``H (d + 1) + width + 1`` (H = width, or 2 width for a gated net); ``kind="moe"``, one
    mixture of ``n_experts`` = E such experts plus the router, ``E (d + 1) + E (H (d + 1) +
    width + 1)``."""
    _check_kind(kind, n_experts)
    _check_architecture(d, width, activation)
    H = 2 * width if activation in GATED else width
    dense = H * (d + 1) + width + 1
    return dense if kind == "mlp" else n_experts * (d + 1) + n_experts * dense


def forward_flops(kind: str, d: int, width: int, activation: str, n_experts: int | None = None) -> int:
    """Multiply-add FLOPs per example of one forward pass, a ``(1 x p)(p x q)`` product counted
    as 2pq FLOPs (the convention of ``torch.utils.flop_counter.FlopCounterMode``).

    ``kind="mlp"``: the first layer ``2 d H`` and the readout ``2 width``. ``kind="moe"``: the
    router ``2 d E`` plus *one* expert, ``2 d H + 2 width``: the routed computation, which is what
    a true dispatch costs, not what :class:`MoE`'s vectorized implementation evaluates (every
    expert's first layer, ``2 d E H``). Elementwise work (bias additions, activations, the gate
    product, the softmax, the final scaling by ``p_{e*}``) is not counted, as
    ``FlopCounterMode`` does not count it.
    """
    _check_kind(kind, n_experts)
    _check_architecture(d, width, activation)
    H = 2 * width if activation in GATED else width
    dense = 2 * d * H + 2 * width
    return dense if kind == "mlp" else 2 * d * n_experts + dense


def matched_dense_width(
    n_experts: int,
    expert_width: int,
    d: int,
    activation: str,
    match: str = "params",
    dense_activation: str | None = None,
) -> int:
    """The width H >= 1 of a dense network (:func:`parameter_count` / :func:`forward_flops`
    ``kind="mlp"``, activation ``dense_activation``, by default the experts') whose parameter
    count (``match="params"``) or forward FLOPs (``match="flops"``) is closest to those of a
    mixture of ``n_experts`` experts of width ``expert_width``. Both counts are linear in the
    width, so the answer is the rounded solution; of two equally close widths the smaller."""
    check_choice(match, "match", ("params", "flops"))
    dense_activation = activation if dense_activation is None else dense_activation
    check_choice(dense_activation, "dense_activation", ACTIVATIONS)
    count = parameter_count if match == "params" else forward_flops
    target = count("moe", d, expert_width, activation, n_experts)
    # count(w) = intercept + slope * w
    intercept = count("mlp", d, 1, dense_activation) - (slope := count("mlp", d, 2, dense_activation) - count("mlp", d, 1, dense_activation))
    w = max(1, math.floor((target - intercept) / slope))
    return min((w, w + 1), key=lambda k: (abs(count("mlp", d, k, dense_activation) - target), k))
