"""The loss and its gradient for a stack of one-hidden-layer MLPs, derived by hand.

For one network (:mod:`monosem.models`) and a mini-batch ``(x_i, y_i)``, i = 1..B,

    pre = x W^T + b,   h = phi(pre)  (or phi(pre_g) * pre_v for a gated net),
    f(x_i) = alpha <a, h_i> + a_0,   L = (1/B) sum_i (f(x_i) - y_i)^2.

With r_i = 2 (f(x_i) - y_i) / B and s_i = alpha r_i the chain rule gives

    dL/da_0 = sum_i r_i,      dL/da_j = sum_i s_i h_ij,
    dL/d[W_j, b_j] = a_j sum_i s_i D_ij [x_i, 1],

where D_ij = dh_ij/dpre_ij = phi'(pre_ij) for ReLU / GELU, and for a gated unit
D = phi'(pre_g) * pre_v on the gate row and phi(pre_g) on the value row. The last line is one
matrix product ``D^T [s x, s]`` of the (B, H) derivative matrix with a thin (B, d + 1) matrix,
scaled row-wise by ``a``: the (B, H) outer product ``s a^T`` that autograd materializes for
dL/dh is never formed, and no graph is recorded. That is why this exists beside autograd (the
reference, :func:`autograd_loss_and_grads`, which the tests compare it with): it is 2-3x faster
per update on a CPU at the Appendix A.2 sizes (``benchmarks/train.py``).

One code path serves every device: on a CPU the models of a stack go through it one after the
other with plain matrix products (PyTorch's batched kernels are slow there); on an accelerator all
of them at once with batched ones. Nothing here synchronizes a GPU.
"""

from __future__ import annotations

import math

import torch

from ..models import GATED, MLPStack

__all__ = ["loss_and_grads", "autograd_loss_and_grads"]

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


#: ``threshold_backward(grad, out, 0)`` is ``grad`` where ``out > 0`` and 0 elsewhere in one fused
#: pass: the kernel of ReLU's own backward, about twice as fast on a CPU as ``sign(out) * grad``
#: (and bit-identical to it)
_masked = torch.ops.aten.threshold_backward


def _phi_and_derivative(pre: torch.Tensor, activation: str, times: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``phi(pre)`` and ``phi'(pre)``, the latter multiplied by ``times`` when given (exact GELU,
    ``F.gelu``'s default; SiLU for SwiGLU). Overwrites ``pre`` for the ReLU-based activations."""
    if activation in ("relu", "reglu"):
        value = pre.relu_()  # in place: the caller's pre-activations are not needed again
        grad = times if times is not None else torch.ones((), dtype=pre.dtype, device=pre.device).expand_as(pre)
        return value, _masked(grad, value, 0)  # grad where pre > 0, else 0
    if activation == "gelu":
        # the same erf form as F.gelu (and its autograd derivative): Phi(t) + t phi(t)
        cdf = torch.erf(pre * _INV_SQRT2).add_(1.0).mul_(0.5)
        value, deriv = pre * cdf, cdf.add_(pre * torch.exp(-0.5 * pre * pre) * _INV_SQRT2PI)
    else:
        sig = torch.sigmoid(pre)  # swiglu: silu(g) = g sigmoid(g), silu' = sig (1 + g (1 - sig))
        value = pre * sig
        deriv = sig.mul_(1.0 + pre - value)
    return value, deriv if times is None else deriv.mul_(times)


def _ones_column(x: torch.Tensor) -> torch.Tensor:
    """``[x, 1]``: the bias rides along as a last input coordinate, so the pre-activations and the
    first-layer gradient are each one plain matrix product (no broadcast copy of ``b``)."""
    return torch.cat([x, torch.ones_like(x[..., :1])], dim=-1)


def _one(W, b, a, a0, x, y, activation: str, width: int, alpha: float):
    """Loss and gradients of one network (2-D tensors) or of a batch of them (3-D)."""
    B, d = x.shape[-2], x.shape[-1]
    x1 = _ones_column(x)  # (..., B, d + 1)
    Wb = torch.cat([W, b.unsqueeze(-1)], dim=-1).transpose(-1, -2)  # (..., d + 1, H)
    if activation in GATED:
        # gate and value pre-activations as two contiguous products (faster than one product
        # followed by strided halves)
        g, v = x1 @ Wb[..., :width], x1 @ Wb[..., width:]
        pg, D_gate = _phi_and_derivative(g, activation, times=v)
        h = pg * v
        D_value = pg
    else:
        h, D_gate = _phi_and_derivative(x1 @ Wb, activation)
        D_value = None
    out = (h @ a.unsqueeze(-1)).squeeze(-1)
    if alpha != 1.0:
        out = out * alpha
    err = out.add_(a0.unsqueeze(-1)).sub_(y)
    loss = (err * err).mean(dim=-1)
    r = err.mul_(2.0 / B)
    s = r * alpha if alpha != 1.0 else r
    g_a0 = r.sum(dim=-1)
    g_a = (h.transpose(-1, -2) @ s.unsqueeze(-1)).squeeze(-1)
    Z = x1.mul_(s.unsqueeze(-1))  # (..., B, d + 1): rows s_i [x_i, 1]
    # G^T = Z^T D (MKL runs this orientation about twice as fast as D^T Z on a CPU); the gate and
    # value halves are multiplied separately, so no (B, 2 width) copy of D is made
    Zt = Z.transpose(-1, -2)
    Gt = Zt @ D_gate
    if D_value is not None:
        Gt = torch.cat([Gt, Zt @ D_value], dim=-1)
        a = torch.cat([a, a], dim=-1)
    Gt.mul_(a.unsqueeze(-2))  # (..., d + 1, H)
    return loss, Gt[..., :d, :].transpose(-1, -2).contiguous(), Gt[..., d, :].contiguous(), g_a, g_a0


@torch.no_grad()
def loss_and_grads(stack: MLPStack, xb: torch.Tensor, yb: torch.Tensor, batched: bool | None = None):
    """Per-model mini-batch losses ``(M,)`` and the gradients of their sum with respect to
    ``(W, b, a, a0)`` (each shaped like the parameter), for mini-batches ``xb`` ``(M, B, d)``,
    ``yb`` ``(M, B)``.

    ``batched`` (default: on accelerators only) evaluates all models with one batched product
    instead of one after the other.
    """
    W, b, a, a0 = stack.W.detach(), stack.b.detach(), stack.a.detach(), stack.a0.detach()
    args = (stack.activation, stack.width, float(stack.output_scale))
    if batched is None:
        batched = W.device.type != "cpu"
    if batched:
        return _one(W, b, a, a0, xb, yb, *args)
    parts = [_one(W[i], b[i], a[i], a0[i], xb[i], yb[i], *args) for i in range(W.shape[0])]
    return tuple(torch.stack(p) for p in zip(*parts))


def autograd_loss_and_grads(stack: MLPStack, xb: torch.Tensor, yb: torch.Tensor):
    """The same quantities through autograd (the reference the hand-derived step is tested
    against, and the path for anything ``loss_and_grads`` does not cover)."""
    params = [stack.W, stack.b, stack.a, stack.a0]
    loss = ((stack(xb) - yb) ** 2).mean(dim=1)
    grads = torch.autograd.grad(loss.sum(), params)
    return (loss.detach(), *grads)
