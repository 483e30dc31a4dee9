"""monosem's RFM against the RFM authors' package xrfm, on identical data, at the book's settings.

    .venv/bin/pip install -e ".[peers]"          # xrfm; never imported by monosem itself
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/compare_xrfm.py [--K 50] [--n 50000] [--global-n 50000]
                        [--n-test 4096] [--run 0] [--parts oracle global] [--global-bandwidth median]
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/compare_xrfm.py --n 5000 --K 10     # seconds

Two methods of Figures 2 and 6 on the mixed-link model with K clusters (training pool and test set
of run ``--run``, float32 inputs as the book's cells), each fitted by both packages in one run,
one after the other, on one thread (``torch.set_num_threads(1)``):

* ``oracle-rfm``: one RFM per true cluster (iterations 0-3), as
  ``monosem.experiments.families.kernels.fit_oracle`` fits it: ``PerClusterOracle(RFMRegressor(
  iterations=3, bandwidth="median", agop_samples=20 000, ...))``, exact solves below 11 000
  points; xrfm: ``monosem.kernels.peers.xrfm_oracle``, one ``xrfm.RFM`` per cluster. K = 50,
  n = 50 000 is the book's largest cell (1 000 points per cluster).
* ``rfm``: one RFM on all n points (``--global-n``), monosem's solver as the book's (exact below
  11 000 points, EigenPro above); xrfm: ``monosem.kernels.peers.xrfm_rfm``.

Printed: one table (a pandas DataFrame), one row per method and package: the wall time of the
fit with the scoring of every iteration on the test set, and the test MSE of iterations 0-3 (for
the oracle: every test point predicted by its own cluster's fit).

Settings are matched as far as xrfm's API allows (tests/test_xrfm_conformance.py checks that the
fits agree): the L2 Laplace kernel, the median bandwidth recomputed after every update (xrfm:
``bandwidth=1, bandwidth_mode="adaptive"``), ridge 1e-6 by a Cholesky solve (xrfm in float64;
monosem's exact solver a float32 factor refined to the float64 solution), the AGOP of gradients
with respect to x on at most 20 000 training points, no early stopping, iterations 0-3. What is
not matched:

* xrfm normalizes the AGOP by its largest entry, monosem by its largest eigenvalue: a scale the
  median bandwidth cancels.
* The median bandwidth's subsample (xrfm: up to 5 000 points, monosem: 2 000) and the AGOP's
  (above 20 000 points: xrfm the first points, monosem a seeded random subset).
* The book's global RFM takes its bandwidth by the cluster-median rule, which xrfm does not offer:
  ``--global-bandwidth cluster-median`` runs monosem so (xrfm stays at the median).
* Above 11 000 points monosem solves by EigenPro (no ridge, stopped at training MSE 4e-4), as the
  book. xrfm 0.4.5 has no CPU iterative solver (its EigenPro calls CUDA in its Nystrom step, and
  its ``RFM`` lacks attributes that path reads), so on a CPU it solves the dense system, which
  needs n^2 float64 numbers: above ``--xrfm-max-bytes`` of them the xrfm row is left out.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("TQDM_DISABLE", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from monosem import data  # noqa: E402
from monosem.experiments.specs import SolverSpec  # noqa: E402
from monosem.kernels import PerClusterOracle, RFMRegressor  # noqa: E402
from monosem.kernels.peers import import_xrfm, xrfm_oracle, xrfm_rfm  # noqa: E402

ITERATIONS = 3
AGOP_SAMPLES = 20_000
EXACT_MAX_N = 11_000


def mse(pred, y) -> float:
    return float(np.mean((np.asarray(pred, dtype=np.float64) - y.numpy()) ** 2))


def row(method: str, package: str, n: int, K: int, solver: str, seconds: float, test_mse) -> dict:
    out = {"method": method, "package": package, "n": n, "K": K, "solver": solver, "wall s": seconds}
    out |= {f"MSE it {t}": v for t, v in enumerate(test_mse)}
    return out


def oracle_rows(model, n: int, n_test: int, run: int) -> list[dict]:
    X, y, c = model.pool(n, run, dtype=torch.float32)
    Xt, yt, ct = model.test_set(n_test, run, dtype=torch.float32)
    yt = yt.to(torch.float64)
    largest = int(torch.bincount(c).max())
    solver = SolverSpec(exact_max_n=EXACT_MAX_N).kwargs(run, "float32")
    t0 = time.perf_counter()
    ours = PerClusterOracle(RFMRegressor(iterations=ITERATIONS, bandwidth="median", agop_samples=AGOP_SAMPLES, **solver)).fit(X, y, groups=c)
    ours_mse = [mse(ours.predict(Xt, groups=ct, iteration=t), yt) for t in range(ITERATIONS + 1)]
    ours_s = time.perf_counter() - t0
    kind = "exact" if largest < EXACT_MAX_N else "eigenpro"
    rows = [row("oracle-rfm", "monosem", n, model.K, f"{kind} (clusters <= {largest})", ours_s, ours_mse)]
    t0 = time.perf_counter()
    theirs = xrfm_oracle(X, y, c, Xt, yt, ct, iterations=ITERATIONS, bandwidth="median", ridge=solver["ridge"],
                         agop_samples=AGOP_SAMPLES, dtype=torch.float64, seed=run)
    theirs_s = time.perf_counter() - t0
    rows.append(row("oracle-rfm", "xrfm", n, model.K, f"lstsq (clusters <= {largest})", theirs_s, theirs.pooled_test_mse()))
    return rows


def global_rows(model, n: int, n_test: int, run: int, bandwidth: str, xrfm_max_bytes: float) -> list[dict]:
    X, y, c = model.pool(n, run, dtype=torch.float32)
    Xt, yt, _ = model.test_set(n_test, run, dtype=torch.float32)
    solver = SolverSpec(exact_max_n=EXACT_MAX_N).kwargs(run, "float32")
    t0 = time.perf_counter()
    ours = RFMRegressor(iterations=ITERATIONS, bandwidth=bandwidth, agop_samples=AGOP_SAMPLES, **solver)
    ours.fit(X, y, groups=c if bandwidth == "cluster-median" else None, X_test=Xt, y_test=yt)
    ours_s = time.perf_counter() - t0
    rows = [row(f"rfm ({bandwidth})", "monosem", n, model.K, ours.estimators_[-1].solver_, ours_s, ours.test_mse_)]
    if 8.0 * n * n > xrfm_max_bytes:
        print(f"xrfm's global RFM at n = {n} left out: its CPU solve needs an n x n float64 matrix ({8e-9 * n * n:.1f} GB)", flush=True)
        return rows
    _, theirs_mse, theirs_s = xrfm_rfm(X, y, Xt, yt.to(torch.float64), iterations=ITERATIONS, bandwidth="median", ridge=solver["ridge"],
                                       agop_samples=AGOP_SAMPLES, method="lstsq", dtype=torch.float64, seed=run)
    rows.append(row("rfm (median)", "xrfm", n, model.K, "lstsq", theirs_s, theirs_mse))
    return rows


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    xrfm = import_xrfm()
    return (f"{cpu}, {torch.get_num_threads()} thread(s); Python {platform.python_version()}, torch {torch.__version__}, "
            f"numpy {np.__version__}, xrfm {xrfm.__version__}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--K", type=int, default=50, help="clusters of the mixed-link model")
    ap.add_argument("--n", type=int, default=50_000, help="training points of the per-cluster oracle")
    ap.add_argument("--global-n", type=int, default=None, help="training points of the global RFM (default: --n)")
    ap.add_argument("--n-test", type=int, default=4_096)
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--parts", nargs="+", choices=["oracle", "global"], default=["oracle", "global"])
    ap.add_argument("--global-bandwidth", choices=["median", "cluster-median"], default="median",
                    help="monosem's bandwidth rule of the global RFM (the book's: cluster-median; xrfm: median)")
    ap.add_argument("--xrfm-max-bytes", type=float, default=4e9, help="largest dense kernel matrix xrfm may build")
    ap.add_argument("--csv", default=None, help="also write the table here")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(machine(), flush=True)
    model = data.mixed_link_model(args.K)
    rows = []
    if "oracle" in args.parts:
        rows += oracle_rows(model, args.n, args.n_test, args.run)
        print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.4g}"), flush=True)
    if "global" in args.parts:
        rows += global_rows(model, args.global_n or args.n, args.n_test, args.run, args.global_bandwidth, args.xrfm_max_bytes)
    table = pd.DataFrame(rows)
    print()
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if args.csv:
        table.to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
