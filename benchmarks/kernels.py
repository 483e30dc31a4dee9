"""Throughput of monosem.kernels on this machine, printed as times and ratios from one run.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/kernels.py [--sizes 1000 2000 5000] [--device cpu]

* kernel evaluation throughput (entries per second, blocked, float32 and float64);
* exact float64 Cholesky solve time against n;
* at the largest n: CG and EigenPro (float32) time to training MSE 4e-4 against the exact solve,
  and the test MSE each reaches (mixed-link data, K = 10);
* AGOP time (closed-form gradients on every training point).

Sizes are modest by default: a 2-core laptop shared with other jobs. On a GPU pass larger sizes.
"""

from __future__ import annotations

import argparse
import time

import torch

from monosem import data
from monosem.device import get_device
from monosem.kernels import EigenProConfig, LaplaceKernelRegressor
from monosem.kernels.laplace import kernel_blocks


def _sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def timed(fn, dev):
    _sync(dev)
    t0 = time.perf_counter()
    out = fn()
    _sync(dev)
    return out, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 2_000, 5_000])
    ap.add_argument("--iterative-sizes", type=int, nargs="+", default=None,
                    help="n for CG and EigenPro (default: the largest exact size)")
    ap.add_argument("--K", type=int, default=10)
    ap.add_argument("--device", default=None)
    ap.add_argument("--eigenpro-subsample", type=int, default=2_000)
    ap.add_argument("--eigenpro-q", type=int, default=160)
    args = ap.parse_args()
    dev = get_device(args.device)
    print(f"device {dev}, torch threads {torch.get_num_threads()}, K = {args.K}")
    model = data.mixed_link_model(args.K)
    iterative_sizes = args.iterative_sizes or [max(args.sizes)]
    n_max = max(args.sizes + iterative_sizes)
    X, y, c = model.pool(n_max, device=dev)
    Xt, yt, _ = model.test_set(2_048, device=dev)

    # kernel evaluation throughput
    Z = X[: min(n_max, 4_000)] - X.mean(0)
    for dt in (torch.float32, torch.float64):
        Zd = Z.to(dt)
        _, s = timed(lambda Zd=Zd: sum(float(Kb[0, 0]) for _, Kb in kernel_blocks(Zd, Zd, 4.0)), dev)
        print(f"kernel evaluation {str(dt)[6:]:8s}: {Zd.shape[0] ** 2 / s / 1e6:8.1f} M entries/s")

    # exact solves against n
    exact_times = {}
    for n in sorted(args.sizes):
        est, s = timed(lambda n=n: LaplaceKernelRegressor(solver="exact", device=dev).fit(X[:n], y[:n]), dev)
        exact_times[n] = s
        mse = float(((est.predict_tensor(Xt) - yt.to(torch.float64)) ** 2).mean())
        print(f"exact  n={n:6d}: {s:7.2f} s   test MSE {mse:.4g}")

    # iterative solvers (float32, stopped at training MSE 4e-4), against the exact solve where it ran
    cfg = EigenProConfig(subsample=args.eigenpro_subsample, top_q=args.eigenpro_q)
    for n in iterative_sizes:
        times = {}
        for solver in ("cg", "eigenpro"):
            est, s = timed(lambda n=n, solver=solver: LaplaceKernelRegressor(solver=solver, eigenpro=cfg, device=dev).fit(X[:n], y[:n]), dev)
            times[solver] = s
            info = est.solve_info_
            mse = float(((est.predict_tensor(Xt).double() - yt.double()) ** 2).mean())
            extra = f"; set-up {info.setup_seconds:.2f} s, batch {info.details['batch']}" if solver == "eigenpro" else ""
            ratio = f"; time / exact {s / exact_times[n]:.2f}" if n in exact_times else ""
            print(f"{solver:8s} n={n:6d}: {s:7.2f} s, {info.iterations:3d} iterations, train MSE {info.train_mse:.2e}, "
                  f"test MSE {mse:.4g}{ratio}{extra}")
        print(f"         n={n:6d}: EigenPro / CG time {times['eigenpro'] / times['cg']:.2f}")

    # AGOP on every training point of the largest exact fit
    n = max(args.sizes)
    est = LaplaceKernelRegressor(solver="exact", device=dev).fit(X[:n], y[:n])
    _, s = timed(lambda: est.agop_tensor(max_samples=None), dev)
    print(f"AGOP   n={n:6d} (m = n points): {s:7.2f} s; ratio to the exact solve {s / exact_times[n]:.2f}")


if __name__ == "__main__":
    main()
