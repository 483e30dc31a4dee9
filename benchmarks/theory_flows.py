"""Population-flow vector fields of Theorem 1, side by side.

Times one evaluation of the two-layer network's vector field (Lemma 9) at the paper profile's
size (K = 3, m = 64 neurons, 10^5 Monte-Carlo points per cluster) with the interaction terms
accumulated over cache-sized blocks of sample points (the default on a CPU) against one pass over
all points at once (the default on a GPU), checks that both give the same field, and prints the
ratio. Then times the teacher-only flow (SciPy BDF with the closed-form Jacobian).

    python benchmarks/theory_flows.py [--m 64] [--n-mc 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from monosem.device import get_device
from monosem.theory import random_directions, teacher_only_flow
from monosem.theory.correlation import check_hermite_coeffs
from monosem.theory.flows import _TwoLayerField
from _timing import best_of


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--K", type=int, default=3)
    ap.add_argument("--R", type=float, default=4.0)
    ap.add_argument("--m", type=int, default=64)
    ap.add_argument("--n-mc", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    dev = get_device()
    print(f"device {dev}, torch threads {torch.get_num_threads()}, K = {args.K}, m = {args.m}, n_mc = {args.n_mc}")

    field = _TwoLayerField(args.K, args.R, 1e-2, args.m, check_hermite_coeffs(None), args.n_mc, 0, dev)
    w0 = torch.as_tensor(random_directions(args.m, args.K, seed=1), device=field.device)
    state = torch.cat([torch.randn(args.m, dtype=torch.float64, device=field.device), w0.reshape(-1)])
    n_points, default_block = field.x.shape[0], field.block
    times, values = {}, {}
    for name, block in (("blocked", default_block), ("one pass", n_points)):
        field.block = block
        values[name] = field(state)[0]
        times[name] = best_of(lambda: field(state), args.repeats)
        print(f"two-layer field, {name:8s} (block {block:6d} of {n_points} points): {times[name] * 1e3:8.1f} ms per evaluation")
    field.block = default_block
    diff = float((values["blocked"] - values["one pass"]).abs().max() / values["one pass"].abs().max())
    print(f"one pass / blocked time: {times['one pass'] / times['blocked']:.2f}x; largest relative difference {diff:.1e}")

    t0 = time.perf_counter()
    flow = teacher_only_flow(random_directions(256, args.K, seed=300), args.K, 32.0, 5e4, t_eval=np.array([0.0, 5e4]))
    print(f"teacher-only flow, 256 neurons, R = 32, t_max = 5e4: {time.perf_counter() - t0:.1f} s, {flow.nfev} evaluations")


if __name__ == "__main__":
    main()
