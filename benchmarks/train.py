"""Training throughput: steps per second of one network, and of k networks batched vs one at a time.

    python benchmarks/train.py [--width 256] [--batch 256] [--k 4] [--steps 300] [--activation relu]

Reports, in one run, the optimizer steps per second of a single network, of a stack of ``k``
networks trained at once (``MLPStack``'s default kernel: batched matmuls on a GPU, a loop of
plain matmuls on a CPU, where PyTorch's batched kernels are slow; both kernels are also timed
separately), and the ratio

    speed-up = (time for k separate runs) / (time for one batched run of k models),

and extrapolates the paper profile of Section 3.1 (four networks plus the six-point ReLU
learning-rate search: 6 x 40 000 + 3 x 20 000 steps at width 2 048, batch 2 048).
"""

from __future__ import annotations

import argparse
import time

import torch

from monosem import data
from monosem.device import get_device
from monosem.models import MLPStack
from monosem.train import TrainConfig, TrainData, train

PAPER_STEPS = 6 * 40_000 + 3 * 20_000  # ReLU grid + GELU, ReGLU, SwiGLU (Appendix A.1)


def steps_per_second(k: int, args, x, y, xv, yv, dev, kernel: str = "auto") -> float:
    cfg = TrainConfig(max_steps=args.steps, batch=args.batch, lr=1e-3, eval_every=args.steps)
    stack = MLPStack(x.shape[1], args.width, args.activation, list(range(k)), kernel=kernel, device=dev)
    train(stack, TrainData(x, y, xv, yv), TrainConfig(max_steps=5, batch=args.batch, lr=1e-3, eval_every=5), progress=False)  # warm-up
    if dev.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    train(stack, TrainData(x, y, xv, yv), cfg, progress=False)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    return args.steps / (time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--activation", default="relu")
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--device", default=None)
    args = p.parse_args()
    dev = get_device(args.device)
    m = data.figure1_model()
    x, y, _ = m.sample(args.n, 1, device=dev)
    xv, yv, _ = m.sample(4096, 2, device=dev)
    one = steps_per_second(1, args, x, y, xv, yv, dev)
    many = steps_per_second(args.k, args, x, y, xv, yv, dev)
    ratio = (args.k / one) / (1 / many)
    print(f"device {dev}, threads {torch.get_num_threads()}, {args.activation}, width {args.width}, batch {args.batch}")
    print(f"one network:            {one:8.1f} steps/s")
    print(f"{args.k} networks batched:   {many:8.1f} steps/s  ({many * args.k:.1f} model-steps/s)")
    print(f"batched vs sequential:  {ratio:8.2f}x  (time of {args.k} separate runs / one batched run)")
    for kernel in ("bmm", "loop"):
        k_many = steps_per_second(args.k, args, x, y, xv, yv, dev, kernel)
        print(f"  kernel={kernel!r:<7} {args.k} batched: {k_many:8.1f} steps/s, ratio {(args.k / one) * k_many:5.2f}x")
    # cost per step taken proportional to width x batch (the matmuls dominate at the paper's size)
    scale = (2048 * 2048) / (args.width * args.batch)
    print(f"paper profile of Section 3.1 (ReLU-sized steps, x{scale:g} the work per step): "
          f"{PAPER_STEPS * scale / one / 3600:.2f} h one at a time, "
          f"{PAPER_STEPS * scale / (many * args.k) / 3600:.2f} h batched by {args.k}")


if __name__ == "__main__":
    main()
