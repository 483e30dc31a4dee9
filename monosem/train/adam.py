"""Adam for a stack of networks, as an optimizer object with a typed state (the optax pattern:
``init(params) -> state``, ``update(params, grads, state, lr) -> state``).

``torch.optim.Adam`` has one learning rate per parameter tensor; a stack of ``M`` networks needs
one per *model* (a learning-rate sweep is one stack, and a stopped model is frozen by a zero
rate). The update is ``torch.optim.Adam``'s formula, in the same order of operations (a test
checks the two agree), applied in place to the stack's parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import torch

__all__ = ["AdamState", "StackAdam"]


@dataclass
class AdamState:
    """Adam's moments, one pair per parameter tensor, and the number of updates applied."""

    count: int
    m: list[torch.Tensor]
    v: list[torch.Tensor]


@dataclass(frozen=True)
class StackAdam:
    """Adam with zero weight decay and one learning rate per model (the leading axis of every
    parameter). ``betas`` and ``eps`` as in ``torch.optim.Adam``."""

    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8

    def init(self, params: Sequence[torch.Tensor]) -> AdamState:
        return AdamState(0, [torch.zeros_like(p) for p in params], [torch.zeros_like(p) for p in params])

    @torch.no_grad()
    def update(self, params: Sequence[torch.Tensor], grads: Sequence[torch.Tensor], state: AdamState,
               lr: torch.Tensor, scales: Sequence[float] | None = None) -> AdamState:
        """One Adam step on ``params`` (in place) with per-model learning rates ``lr`` ``(M,)``,
        times a per-tensor factor ``scales`` (default 1: e.g. a muP readout rate); returns the new
        state (the moments are updated in place)."""
        b1, b2 = self.betas
        t = state.count + 1
        bc1, bc2 = 1 - b1**t, 1 - b2**t
        for i, (p, g, m, v) in enumerate(zip(params, grads, state.m, state.v)):
            m.lerp_(g, 1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (v.sqrt() / math.sqrt(bc2)).add_(self.eps)
            rate = lr if scales is None or scales[i] == 1.0 else lr * scales[i]
            p.sub_((rate / bc1).view(-1, *[1] * (p.ndim - 1)) * m / denom)
        return AdamState(t, state.m, state.v)
