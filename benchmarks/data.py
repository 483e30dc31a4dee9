"""Sampling throughput of the data models, side by side.

Compares, in one run on the current device, `model.pool(n)` (chunked CPU draws so that pools are
nested and identical on every device, then arithmetic on the device) with a one-shot draw of the
same sizes directly with torch's global generator (not nested, device-dependent), and times the
Bayes predictor. Prints the ratio.

    python benchmarks/data.py [--n 200000] [--K 50] [--repeats 3]
"""

from __future__ import annotations

import argparse

import torch

from monosem import data
from monosem.device import get_device
from _timing import best_of


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--K", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    dev = get_device()
    m = data.mixed_link_model(args.K)

    def naive():
        c = torch.randint(m.K, (args.n,), device=dev)
        z = torch.randn(args.n, m.d, device=dev, dtype=torch.float64)
        x = m.means.to(dev)[c] + z * m.cov_diag.to(dev).sqrt()
        return x, m.f_star(x, c)

    t_pool = best_of(lambda: m.pool(args.n, device=dev), args.repeats)
    t_naive = best_of(naive, args.repeats)
    x, _, _ = m.pool(args.n, device=dev, dtype=torch.float64)
    t_bayes = best_of(lambda: m.bayes(x), args.repeats)
    print(f"device {dev}, K = {args.K}, n = {args.n}")
    print(f"  pool (nested, device-independent): {t_pool * 1e3:8.1f} ms  ({args.n / t_pool / 1e6:.2f} M rows/s)")
    print(f"  one-shot draw on the device:       {t_naive * 1e3:8.1f} ms")
    print(f"  ratio pool / one-shot:             {t_pool / t_naive:8.2f}")
    print(f"  Bayes predictor on the pool:       {t_bayes * 1e3:8.1f} ms  ({args.n / t_bayes / 1e6:.2f} M rows/s)")


if __name__ == "__main__":
    main()
