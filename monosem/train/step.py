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
dL/dh is never formed, and no graph is recorded. Every (B, H) array is written, with ``out=``
and in place, into buffers that one :class:`StepWorkspace` keeps for the whole run, so an update
allocates no large memory. That is why this exists beside autograd (the reference,
:func:`autograd_loss_and_grads`, which the tests compare it with): at width 1 024, batch 1 024 on
one thread of this project's CPU it does about twice autograd's updates per second
(``benchmarks/train.py`` prints the ratios and the arithmetic floor).

**Revisions.** The same gradient can be assembled with fewer passes over the (B, H) arrays, which
changes the last bits of every update and so, over a long run, the trajectory; a run names the
revision it used (:data:`STEP_REVISION`, ``TrainConfig.step_revision``), so that a recorded
result stays reproducible:

* revision 1 forms h and takes the readout products ``f = h a`` and ``dL/da = h^T s`` as
  matrix-vector products over it (the step of the recorded long run);
* revision 2 (the default) uses that h is linear in the value row (gated nets) or in the
  pre-activation (ReLU: relu(t) = t 1[t > 0]). With ``G = [s x, s]^T D`` the first-layer product
  above, ``dL/da_j = sum_i s_i h_ij = sum_k [W_j, b_j]_k G_kj`` (value rows for a gated net), read
  off the (d + 1, H) product with no pass over a (B, H) array; and for a gated net
  ``f(x_i) = alpha <[x_i, 1], (phi(pre_g) (a * [W_v, b_v]))_i> + a_0``, one product of the
  (B, width) gate activations with a thin (width, d + 1) matrix, so h itself is never formed.
  GELU is not homogeneous and keeps revision 1's products. And since every quantity of row i
  depends on row i alone, on a CPU the step of an ungated net runs in row blocks that stay in
  cache (:func:`block_rows`), G accumulated over them (``benchmarks/train.py`` times the two
  revisions side by side, in whole training updates);
* revision 3 is revision 2 with row blocks for every wide net on a CPU: a gated net's step runs
  in blocks whose (rows, width) arrays are about :data:`_GATED_BLOCK_BYTES` (at width 4 096,
  batch 4 096 on one thread: 63 ms per step against 87 unblocked), and an ungated net too wide
  for a :data:`_BLOCK_BYTES` block of :data:`_MIN_BLOCK_ROWS` rows runs in blocks of that many
  rows instead of unblocked (ReLU at 4 096 x 4 096: 27 against 39 ms). At the widths and
  batches where revision 2 already blocks, or where neither blocks (width <= 512 gated, every
  smaller batch), the two are the same computation.

Not used: ``torch.compile`` (inductor's C++ backend) fusing ReLU, the readout f and the 0/1
derivative into one kernel, and one (B, 2 width) product for a gated net's two halves instead of
two (B, width) ones; ``benchmarks/train.py`` is where such a change is measured against the eager
step.

One code path serves every device: on a CPU the models of a stack go through it one after the
other with plain matrix products (PyTorch's batched kernels are slow there); on an accelerator all
of them at once with batched ones. Nothing here synchronizes a GPU.
"""

from __future__ import annotations

import math

import torch

from ..models import GATED, MLPStack

__all__ = ["FASTEST_STEP_REVISION", "STEP_REVISION", "STEP_REVISIONS", "StepWorkspace", "loss_and_grads", "autograd_loss_and_grads"]

#: the revisions of the hand-derived step (see the module docstring) and the one new runs use
STEP_REVISIONS = (1, 2, 3)
STEP_REVISION = 2
#: the fastest revision, for new long runs that name it (the paper-scale networks)
FASTEST_STEP_REVISION = 3

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


#: ``threshold_backward(grad, out, 0)`` is ``grad`` where ``out > 0`` and 0 elsewhere in one fused
#: pass (ReLU's own backward kernel): a gated net's phi'(g) v without a separate 0/1 mask
_masked = torch.ops.aten.threshold_backward.grad_input


class StepWorkspace:
    """The buffers of the hand-derived step, allocated once and reused by every update.

    Why it exists: a width-1 024, batch-1 024 step handles several (B, H) float32 arrays of 4 MiB.
    Allocated afresh every update, each one is new memory from the operating system (the C
    allocator returns blocks that large to it on free), and filling new pages costs about as much
    as the matrix products that write them. With the buffers reused, the width-1 024 step on one
    thread went from 1.4x autograd's updates per second to 1.9-2.0x (``benchmarks/train.py``),
    with bit-identical results (the same kernels on the same operands, written into existing
    memory with ``out=``). Each name holds one flat buffer, handed out as a contiguous view of the
    shape asked for (so that the smaller last row block of a step reuses its block's memory); it is
    re-made when more numbers, another dtype or another device are asked for. What
    :func:`loss_and_grads` returns through a workspace lives in it: valid until the next call with
    the same workspace.
    """

    def __init__(self) -> None:
        self._buffers: dict[str, torch.Tensor] = {}
        # the views handed out, kept so that a repeated request costs one dictionary lookup
        self._views: dict[tuple[str, tuple[int, ...]], torch.Tensor] = {}

    def get(self, name: str, shape: tuple[int, ...], like: torch.Tensor) -> torch.Tensor:
        """The buffer ``name``, shaped ``shape`` with ``like``'s dtype and device (contents
        undefined)."""
        view = self._views.get((name, shape))
        if view is not None and view.dtype == like.dtype and view.device == like.device:
            return view
        numel = math.prod(shape)
        t = self._buffers.get(name)
        if t is None or t.numel() < numel or t.dtype != like.dtype or t.device != like.device:
            t = self._buffers[name] = torch.empty(numel, dtype=like.dtype, device=like.device)
            self._views = {k: v for k, v in self._views.items() if k[0] != name}
        view = self._views[(name, shape)] = t[:numel].view(shape)
        return view


def _hidden(x1, Wb, activation: str, width: int, ws: StepWorkspace, form_h: bool = True):
    """The hidden representation ``h`` and the derivative matrices ``(D_gate, D_value)``
    (``D_value`` None for an ungated net; both None for ReLU, whose derivative the caller makes
    from ``h`` in place once ``h`` is no longer needed), computed into the workspace with the
    operations, in the order, of the formulas in the module docstring (exact GELU, ``F.gelu``'s
    default; SiLU for SwiGLU). A gated net's ``h`` is None when ``form_h`` is False (revision 2:
    its readout products are taken without it)."""
    lead, B = x1.shape[:-2], x1.shape[-2]
    H = Wb.shape[-1]
    if activation in GATED:
        shape = (*lead, B, width)
        # gate and value pre-activations as two contiguous products (faster than one product
        # followed by strided halves)
        g = torch.matmul(x1, Wb[..., :width], out=ws.get("g", shape, x1))
        v = torch.matmul(x1, Wb[..., width:], out=ws.get("v", shape, x1))
        if activation == "reglu":
            pg = g.relu_()
            h = torch.mul(pg, v, out=ws.get("h", shape, x1)) if form_h else None
            D_gate = _masked(v, pg, 0, grad_input=v)  # phi'(g) v, in place: v is not needed again
        else:  # swiglu: silu(g) = g sigmoid(g), silu'(g) = sig (1 + g - silu(g))
            sig = torch.sigmoid(g, out=ws.get("D", shape, x1))
            pg = torch.mul(g, sig, out=ws.get("p", shape, x1))
            D_gate = sig.mul_(g.add_(1.0).sub_(pg)).mul_(v)
            h = torch.mul(pg, v, out=g) if form_h else None  # g is no longer needed
        return h, D_gate, pg
    shape = (*lead, B, H)
    pre = torch.matmul(x1, Wb, out=ws.get("pre", shape, x1))
    if activation == "relu":
        # in place: the pre-activations are not needed again; D = phi'(pre) = sign(h) is made
        # in place of h too, once the readout products have used h (see _one)
        return pre.relu_(), None, None
    # gelu: phi(t) = t Phi(t), phi'(t) = Phi(t) + t phi(t), Phi through erf as in F.gelu
    cdf = torch.mul(pre, _INV_SQRT2, out=ws.get("D", shape, x1)).erf_().add_(1.0).mul_(0.5)
    h = torch.mul(pre, cdf, out=ws.get("h", shape, x1))
    density = torch.mul(pre, -0.5, out=ws.get("t", shape, x1)).mul_(pre).exp_()
    return h, cdf.add_(pre.mul_(density).mul_(_INV_SQRT2PI)), None


#: revision 2 on a CPU: an ungated net's step runs in row blocks whose (rows, H) array is about
#: this many bytes, so that it stays in a core's L2 cache (2 MiB here) from the forward product to
#: the weight-gradient product
_BLOCK_BYTES = 2**20
#: fewer rows per block than this and the step runs unblocked: each block costs some fifteen
#: small operations (about 60 us), more than the cache saves
_MIN_BLOCK_ROWS = 256
#: revision 3, gated nets: the bytes of one (rows, width) block array (each block holds two, g
#: and v); measured best at widths 2 048 and 4 096 on this project's CPU (2 MiB L2 per core)
_GATED_BLOCK_BYTES = 2**21
#: revision 3, gated nets: never fewer rows per block than this
_MIN_GATED_BLOCK_ROWS = 128


def _power_of_two_rows(block_bytes: int, cols: int, like: torch.Tensor) -> int:
    """The largest power of two ``rows`` with ``rows * cols`` numbers of ``like``'s dtype within
    ``block_bytes`` (at least 1)."""
    return 1 << max(block_bytes // (cols * like.element_size()), 1).bit_length() - 1


def block_rows(B: int, H: int, activation: str, like: torch.Tensor, revision: int = 2) -> int:
    """Rows per block of revision 2's step (``B``: unblocked).

    On an accelerator all ``B`` (one batched pass). On a CPU, for ReLU and GELU the power of two
    whose (rows, H) block of ``like``'s dtype is about :data:`_BLOCK_BYTES`, unless that is under
    :data:`_MIN_BLOCK_ROWS`; gated nets run unblocked: their blocks hold two (rows, width) arrays
    and three products each, and blocking them saves no time on one thread, while ReLU and GELU
    save the trips of their (B, H) arrays between memory and the cache. ``revision`` 3 blocks the
    wide nets that revision 2 leaves unblocked (see the module docstring)."""
    if like.device.type != "cpu":
        return B
    if activation in GATED:
        if revision < 3:
            return B
        width = H // 2
        return min(B, max(_MIN_GATED_BLOCK_ROWS, _power_of_two_rows(_GATED_BLOCK_BYTES, width, like)))
    rows = _power_of_two_rows(_BLOCK_BYTES, H, like)
    if rows < _MIN_BLOCK_ROWS:
        return min(B, _MIN_BLOCK_ROWS) if revision >= 3 else B
    return min(B, rows)


def _inputs(W, b, x, ws: StepWorkspace):
    """``[x, 1]`` and ``[W, b]`` in the workspace: the bias rides along as a last input coordinate,
    so the pre-activations and the first-layer gradient are each one plain matrix product."""
    lead, (B, d) = x.shape[:-2], x.shape[-2:]
    H = W.shape[-2]
    x1 = ws.get("x1", (*lead, B, d + 1), x)
    x1[..., :d].copy_(x)
    x1[..., d].fill_(1.0)
    WbT = ws.get("WbT", (*lead, H, d + 1), W)
    WbT[..., :d].copy_(W)
    WbT[..., d].copy_(b)
    return x1, WbT


def _one(W, b, a, a0, x, y, activation: str, width: int, alpha: float, ws: StepWorkspace, out, revision: int):
    """Loss and gradients of one network (2-D tensors) or of a batch of them (3-D), written into
    ``out = (loss, gW, gb, ga, ga0)``, by the step of ``revision``."""
    if revision >= 2:
        return _one_revision2(W, b, a, a0, x, y, activation, width, alpha, ws, out, revision)
    loss_out, gW, gb, ga, ga0 = out
    lead, (B, d) = x.shape[:-2], x.shape[-2:]
    H = W.shape[-2]
    x1, WbT = _inputs(W, b, x, ws)
    h, D_gate, D_value = _hidden(x1, WbT.transpose(-1, -2), activation, width, ws)
    f = torch.matmul(h, a.unsqueeze(-1), out=ws.get("f", (*lead, B, 1), x)).squeeze(-1)
    if alpha != 1.0:
        f = f.mul_(alpha)
    err = f.add_(a0.unsqueeze(-1)).sub_(y)
    loss_out.copy_((err * err).mean(dim=-1))
    r = err.mul_(2.0 / B)
    s = r * alpha if alpha != 1.0 else r
    ga0.copy_(r.sum(dim=-1))
    ga.copy_(torch.matmul(h.transpose(-1, -2), s.unsqueeze(-1), out=ws.get("ga", (*lead, width, 1), x)).squeeze(-1))
    Zt = x1.mul_(s.unsqueeze(-1)).transpose(-1, -2)  # (..., d + 1, B): columns s_i [x_i, 1]
    if D_gate is None:  # relu: the 0/1 derivative, in place of h (h >= 0, so sign(h) = 1[pre > 0])
        D_gate = h.sign_()
    # G^T = Z^T D (MKL runs this orientation about twice as fast as D^T Z on a CPU); the gate and
    # value halves are multiplied separately, so no (B, 2 width) copy of D is made
    halves = [(D_gate, slice(0, width))] + ([(D_value, slice(width, H))] if D_value is not None else [])
    for D, rows in halves:
        Gt = torch.matmul(Zt, D, out=ws.get("Gt", (*lead, d + 1, width), x))
        torch.mul(Gt[..., :d, :].transpose(-1, -2), a.unsqueeze(-1), out=gW[..., rows, :])
        torch.mul(Gt[..., d, :], a, out=gb[..., rows])


def _accumulate(G: torch.Tensor, A: torch.Tensor, B: torch.Tensor, first: bool) -> None:
    """``G = A B`` on the first block, ``G += A B`` on the others (2-D or batched 3-D)."""
    if first:
        torch.matmul(A, B, out=G)
    elif G.ndim == 2:
        G.addmm_(A, B)
    else:
        G.baddbmm_(A, B)


def _one_revision2(W, b, a, a0, x, y, activation: str, width: int, alpha: float, ws: StepWorkspace, out,
                   revision: int = 2):
    """Revisions 2 and 3 (see the module docstring). Every quantity of a row i (its pre-activations, f_i,
    r_i, s_i, its rows of D) depends on that row alone, so on a CPU an ungated net's batch goes
    through the step in row blocks of :func:`block_rows` whose (rows, H) arrays stay in cache from
    the forward product to the weight-gradient product, which accumulates ``G += Z_blk^T D_blk``
    over them."""
    loss_out, gW, gb, ga, ga0 = out
    lead, (B, d) = x.shape[:-2], x.shape[-2:]
    H = W.shape[-2]
    x1, WbT = _inputs(W, b, x, ws)
    Wb = WbT.transpose(-1, -2)
    gated = activation in GATED
    # h is homogeneous (linear in the value row, or relu(t) = t 1[t > 0]) for all but GELU
    homogeneous = activation != "gelu"
    if gated:  # f_i = <[x_i, 1], (phi(pre_g) (a * [W_v, b_v]))_i>: h is linear in the value row
        aWv = torch.mul(WbT[..., width:, :], a.unsqueeze(-1), out=ws.get("aWv", (*lead, width, d + 1), x))
    G = [ws.get(name, (*lead, d + 1, width), x) for name in (("G0", "G1") if gated else ("G0",))]
    ga_acc = None if homogeneous else ws.get("ga", (*lead, width, 1), x)
    R = block_rows(B, H, activation, x, revision)
    for i in range(0, B, R):
        rows, first = slice(i, min(i + R, B)), i == 0
        n = rows.stop - rows.start
        x1b = x1 if R == B else x1[..., rows, :]
        h, D_gate, D_value = _hidden(x1b, Wb, activation, width, ws, form_h=not gated)
        if gated:
            U = torch.matmul(D_value, aWv, out=ws.get("U", (*lead, n, d + 1), x))
            f = torch.sum(U.mul_(x1b), dim=-1, out=ws.get("f", (*lead, n), x))
        else:
            f = torch.matmul(h, a.unsqueeze(-1), out=ws.get("f", (*lead, n, 1), x)).squeeze(-1)
        if alpha != 1.0:
            f = f.mul_(alpha)
        err = f.add_(a0.unsqueeze(-1)).sub_(y if R == B else y[..., rows])
        # the sums over the batch (sum of squares, dL/da_0) accumulate in the output slots
        sq, r = (err * err).sum(dim=-1), err.mul_(2.0 / B)
        if first:
            loss_out.copy_(sq)
            ga0.copy_(r.sum(dim=-1))
        else:
            loss_out.add_(sq)
            ga0.add_(r.sum(dim=-1))
        s = r * alpha if alpha != 1.0 else r
        if ga_acc is not None:  # GELU: dL/da = h^T s, accumulated over the blocks
            _accumulate(ga_acc, h.transpose(-1, -2), s.unsqueeze(-1), first)
        Zt = x1b.mul_(s.unsqueeze(-1)).transpose(-1, -2)  # (..., d + 1, n): columns s_i [x_i, 1]
        if D_gate is None:  # relu: the 0/1 derivative, in place of h
            D_gate = h.sign_()
        _accumulate(G[0], Zt, D_gate, first)
        if gated:
            _accumulate(G[1], Zt, D_value, first)
    loss_out.div_(B)
    if homogeneous:  # dL/da_j = sum_k [W_j, b_j]_k G_kj (value rows if gated)
        Gv, Wv = G[-1], WbT[..., H - width:, :]
        torch.sum(torch.mul(Gv, Wv.transpose(-1, -2), out=ws.get("WG", (*lead, d + 1, width), x)), dim=-2, out=ga)
    else:
        ga.copy_(ga_acc.squeeze(-1))
    for Gt, half in zip(G, (slice(0, width), slice(width, H))):
        torch.mul(Gt[..., :d, :].transpose(-1, -2), a.unsqueeze(-1), out=gW[..., half, :])
        torch.mul(Gt[..., d, :], a, out=gb[..., half])


@torch.no_grad()
def loss_and_grads(stack: MLPStack, xb: torch.Tensor, yb: torch.Tensor, batched: bool | None = None,
                   workspace: StepWorkspace | None = None, revision: int = STEP_REVISION):
    """Per-model mini-batch losses ``(M,)`` and the gradients of their sum with respect to
    ``(W, b, a, a0)`` (each shaped like the parameter), for mini-batches ``xb`` ``(M, B, d)``,
    ``yb`` ``(M, B)``.

    ``batched`` (default: on accelerators only) evaluates all models with one batched product
    instead of one after the other. ``workspace`` (default: a fresh one) holds the buffers and
    the returned tensors; the training loop passes one workspace to every update. ``revision``:
    one of :data:`STEP_REVISIONS` (see the module docstring).
    """
    if revision not in STEP_REVISIONS:
        raise ValueError(f"revision must be one of {STEP_REVISIONS}, got {revision!r}")
    W, b, a, a0 = stack.W.detach(), stack.b.detach(), stack.a.detach(), stack.a0.detach()
    ws = workspace if workspace is not None else StepWorkspace()
    M = W.shape[0]
    out = (ws.get("out_loss", (M,), W), ws.get("out_W", tuple(W.shape), W), ws.get("out_b", tuple(b.shape), W),
           ws.get("out_a", tuple(a.shape), W), ws.get("out_a0", tuple(a0.shape), W))
    args = (stack.activation, stack.width, float(stack.output_scale), ws)
    if batched is None:
        batched = W.device.type != "cpu"
    if batched:
        _one(W, b, a, a0, xb, yb, *args, out, revision)
    else:
        # the models one after the other, sharing the (B, H) buffers: each writes its own slice
        for i in range(M):
            _one(W[i], b[i], a[i], a0[i], xb[i], yb[i], *args, tuple(o[i] for o in out), revision)
    return out


def autograd_loss_and_grads(stack: MLPStack, xb: torch.Tensor, yb: torch.Tensor):
    """The same quantities through autograd (the reference the hand-derived step is tested
    against, and the path for anything ``loss_and_grads`` does not cover)."""
    params = [stack.W, stack.b, stack.a, stack.a0]
    loss = ((stack(xb) - yb) ** 2).mean(dim=1)
    grads = torch.autograd.grad(loss.sum(), params)
    return (loss.detach(), *grads)
