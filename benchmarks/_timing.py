"""Shared timing helper of the benchmark scripts (imported as a sibling module when a script runs)."""

from __future__ import annotations

import time

import torch


def best_of(fn, repeats: int) -> float:
    """The shortest wall time of ``repeats`` calls of ``fn`` (waiting for the GPU, if any)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best
