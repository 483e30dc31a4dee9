"""One-hidden-layer MLPs of Section 3 / Appendices A.1-A.2: ReLU, GELU, ReGLU and SwiGLU.

An ordinary network computes

    f(x) = alpha * sum_j a_j phi(<w_j, x> + b_j) + a_0,          phi = ReLU or GELU,

and a gated one (Shazeer 2020)

    f(x) = alpha * sum_j a_j phi(<w_{g,j}, x> + b_{g,j}) (<w_{v,j}, x> + b_{v,j}) + a_0,

with phi = ReLU (ReGLU) or SiLU (SwiGLU). Every weight and bias is trainable (Appendix A.1).

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
"""

from __future__ import annotations

import math
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .checks import check_choice, check_int, check_positive
from .device import get_device, resolve_dtype, torch_generator

__all__ = ["ACTIVATIONS", "GATED", "INITS", "MLP", "MLPStack", "init_parameters", "mup_readout_lr_scale"]

#: The four architectures, by name.
ACTIVATIONS = ("relu", "gelu", "reglu", "swiglu")
#: The gated ones (hidden representation phi(W_g x + b_g) * (W_v x + b_v)).
GATED = ("reglu", "swiglu")

_PHI = {"relu": F.relu, "gelu": F.gelu, "reglu": F.relu, "swiglu": F.silu}


#: The initializations, by name (see :func:`init_parameters`): ``"pytorch"`` (the default) and
#: ``"balanced"``.
INITS = ("pytorch", "balanced")


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
    approximate. Meant with a small ``hidden_scale`` (the output at init is of order
    ``hidden_scale^2 sqrt(width)``). Figure 1's networks use it with ``hidden_scale=0.1``
    (:data:`monosem.experiments.specialization.FIGURE1_READING`: the Section 3.1 readings ablation
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
        out = []
        for i in range(self.n_models):
            m = MLP(self.d, self.width, self.activation, seed=self.seeds[i], hidden_scale=self.hidden_scale,
                    output_scale=self.output_scale, init=self.init, readout_lr_scale=self.readout_lr_scale,
                    dtype=self.W.dtype, device=self.W.device)
            with torch.no_grad():
                for name in ("W", "b", "a", "a0"):
                    getattr(m, name).copy_(getattr(self, name)[i])
            out.append(m)
        return out

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
        with torch.no_grad():
            for name in ("W", "b", "a", "a0"):
                getattr(stack, name).copy_(torch.stack([getattr(m, name).detach() for m in models]))
        return stack

    def extra_repr(self) -> str:
        return f"n_models={self.n_models}, d={self.d}, width={self.width}, activation={self.activation!r}, output_scale={self.output_scale:g}"
