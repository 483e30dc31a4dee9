"""Throughput of monosem.kernels on this machine, printed as times and ratios from one run.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/kernels.py [--sizes 1000 2000 5000] [--device cpu]

* kernel evaluation throughput (entries per second, blocked, float32 and float64);
* the streamed kernel-vector product that EigenPro and CG use beyond the cached size, at
  ``--matvec-n`` (50 000) points in float32: monosem's blocks (4 MiB), the previous 128 MiB
  blocks, and the loop a user would write (``torch.cdist`` on 128 MiB row chunks, ``exp``, ``@``),
  with the ratios and the rate against an arithmetic floor;
* exact solve time against n: the mixed-precision solve (float32 factor, float64 refinement; the
  default) beside the float64 factorization, and how far apart their solutions are;
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
from monosem.kernels.laplace import kernel_blocks, kernel_matvec


def _sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def timed(fn, dev):
    _sync(dev)
    t0 = time.perf_counter()
    out = fn()
    _sync(dev)
    return out, time.perf_counter() - t0


def streamed_product(model, n: int, dev: torch.device, bandwidth: float = 4.0) -> None:
    """Time one product k(Z, Z) v at n points in float32, streamed (the kernel is never held)."""
    Z, _, _ = model.pool(n, device=dev)
    Z = Z - Z.mean(0)
    v = torch.randn(n, device=dev, generator=torch.Generator(device=dev).manual_seed(0))

    def plain() -> torch.Tensor:
        # the loop a user would write: cdist on row chunks of 128 MiB, exp, product
        step = max(1, 2**27 // (4 * n))
        return torch.cat([torch.exp(-torch.cdist(Z[i : i + step], Z) / bandwidth) @ v for i in range(0, n, step)])

    variants = {
        "monosem (4 MiB blocks)": lambda: kernel_matvec(Z, Z, bandwidth, v),
        "monosem, 128 MiB blocks": lambda: kernel_matvec(Z, Z, bandwidth, v, block_bytes=2**27),
        "plain cdist loop": plain,
    }
    times, outs = {}, {}
    for name, fn in variants.items():
        outs[name], times[name] = timed(fn, dev)
    # floor: the distance product's 2 d flops per entry at a large mm's rate, the sqrt and exp
    # at one entry per cycle of a ~3 GHz core (a generous bound: both are vectorized)
    a = torch.randn(2048, 2048, device=dev)
    _, s_mm = timed(lambda: a @ a, dev)
    mm_rate = 2 * 2048**3 / s_mm
    floor = n * n * 2 * Z.shape[1] / mm_rate + n * n * 2 / 3e9 / 8
    base = times["monosem (4 MiB blocks)"]
    print(f"streamed product k(Z, Z) v, n = {n}, float32 (floor ~{floor:.2f} s: mm at {mm_rate / 1e9:.0f} GFLOP/s, sqrt + exp 8-wide):")
    for name, s in times.items():
        err = float((outs[name] - outs["monosem (4 MiB blocks)"]).norm() / outs["monosem (4 MiB blocks)"].norm())
        print(f"  {name:24s} {s:7.2f} s  {n * n / s / 1e6:7.0f} M entries/s  time / monosem {s / base:5.2f}  "
              f"of floor {floor / s:5.0%}  relative difference {err:.1e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 2_000, 5_000])
    ap.add_argument("--iterative-sizes", type=int, nargs="+", default=None,
                    help="n for CG and EigenPro (default: the largest exact size)")
    ap.add_argument("--K", type=int, default=10)
    ap.add_argument("--device", default=None)
    ap.add_argument("--eigenpro-subsample", type=int, default=2_000)
    ap.add_argument("--eigenpro-q", type=int, default=160)
    ap.add_argument("--matvec-n", type=int, default=50_000, help="n of the streamed product (0: skip)")
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

    if args.matvec_n:
        streamed_product(model, args.matvec_n, dev)

    # exact solves against n, both precisions
    exact_times = {}
    for n in sorted(args.sizes):
        fits = {}
        for precision in ("mixed", "float64"):
            fits[precision] = timed(lambda n=n, p=precision: LaplaceKernelRegressor(solver="exact", exact_precision=p, device=dev).fit(X[:n], y[:n]), dev)
        (est, s), (ref, s64) = fits["mixed"], fits["float64"]
        exact_times[n] = s
        mse = float(((est.predict_tensor(Xt) - yt.to(torch.float64)) ** 2).mean())
        gap = float((est.predict_tensor(Xt) - ref.predict_tensor(Xt)).norm() / ref.predict_tensor(Xt).norm())
        print(f"exact  n={n:6d}: mixed {s:7.2f} s, float64 {s64:7.2f} s, ratio {s / s64:.2f}; test MSE {mse:.4g}; "
              f"predictions differ by {gap:.1e} (relative); refinement steps {est.solve_info_.details.get('refine_steps')}")

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
