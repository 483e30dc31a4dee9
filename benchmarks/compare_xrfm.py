"""monosem.kernels.RFMRegressor against the RFM authors' package xrfm, on identical data.

    .venv/bin/pip install xrfm          # the `dev` extra; never imported by monosem itself
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/compare_xrfm.py [--n 5000 20000] [--n-test 2048]
                        [--data 1 10] [--precisions mixed float64]

For every training size and data set it fits xrfm and monosem (once per exact-solve precision:
``mixed``, monosem's default, a float32 Cholesky factor refined to the float64 solution; and
``float64``, a float64 factorization) and prints the test MSE and the fit time as ratios to
xrfm's, side by side from one run.

Both are configured to the same method as far as xrfm's API allows: the L2 Laplace kernel
exp(-||M^{1/2}(x - x')|| / h), h = the median pairwise distance recomputed after every update
(xrfm: ``bandwidth=1, bandwidth_mode="adaptive"``), ridge 1e-6 solved by a float64 Cholesky
factorization, three AGOP updates (iterations 0-3), the last iteration reported, AGOP on all
n <= 20 000 training points, no gradient centring. Two data sets: a single-index model
(``mixed_link_model(1)``) and the mixed-link model with K = 10.

Both take the AGOP of gradients with respect to the input x (xrfm computes them in the
transformed space and maps them back with M^{1/2}, as monosem does). Differences that remain:

* xrfm normalizes the AGOP by its largest entry, monosem by its largest eigenvalue: a scale, which
  the median bandwidth cancels exactly.
* The median bandwidth is estimated on different random subsamples (xrfm: up to 5 000 points of
  the training distance matrix; monosem: 2 000 points), so h differs by a fraction of a percent.
* At a training point the Laplace kernel is not differentiable: xrfm drops kernel terms at
  distance < 1e-10, monosem drops each point's own term by index (the same terms, barring
  duplicates).
* xrfm solves in the dtype it is given (float64 here, to match monosem's exact solver).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from monosem import data
from monosem.kernels import RFMRegressor


def xrfm_fit(X, y, Xt, yt, iters: int):
    from xrfm import RFM

    torch.manual_seed(0)  # xrfm draws its bandwidth subsample from torch's global generator
    model = RFM(kernel="laplace", iters=iters, bandwidth=1.0, exponent=1.0, bandwidth_mode="adaptive",
                device=torch.device("cpu"), verbose=False, tuning_metric="mse", solver="cholesky")
    t0 = time.perf_counter()
    model.fit((X, y), (Xt, yt), iters=iters, method="lstsq", reg=1e-6, return_best_params=False,
              early_stop_rfm=False, total_points_to_sample=20_000, M_batch_size=X.shape[0], solver="cholesky")
    seconds = time.perf_counter() - t0
    pred = model.predict(Xt).reshape(-1).to(torch.float64)
    M = model.M.to(torch.float64).numpy()
    return float(((pred - yt) ** 2).mean()), M, seconds


def ours_fit(X, y, Xt, yt, iters: int, precision: str):
    t0 = time.perf_counter()
    rfm = RFMRegressor(iterations=iters, bandwidth="median", ridge=1e-6, solver="exact", exact_precision=precision).fit(X, y)
    seconds = time.perf_counter() - t0
    pred = torch.from_numpy(rfm.predict(Xt))
    return float(((pred - yt) ** 2).mean()), rfm.metric_, seconds


def top_subspace(M: np.ndarray, k: int) -> np.ndarray:
    return np.linalg.eigh(M)[1][:, ::-1][:, :k]


def subspace_alignment(A: np.ndarray, B: np.ndarray, k: int) -> float:
    """Mean squared cosine of the principal angles between the top-k eigenspaces (1 = identical)."""
    s = np.linalg.svd(top_subspace(A, k).T @ top_subspace(B, k), compute_uv=False)
    return float(np.mean(s**2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[5_000, 20_000])
    ap.add_argument("--n-test", type=int, default=2_048)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--data", type=int, nargs="+", default=[1, 10], help="K of mixed_link_model(K)")
    ap.add_argument("--precisions", nargs="+", default=["mixed", "float64"])
    args = ap.parse_args()
    import xrfm

    print(f"xrfm {xrfm.__version__}, torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"test n = {args.n_test}, iterations 0-{args.iters}")
    for n in args.n:
        for K in args.data:
            model = data.mixed_link_model(K)
            X, y, _ = model.pool(n, dtype=torch.float64)
            Xt, yt, _ = model.test_set(args.n_test, dtype=torch.float64)
            k = min(K, 10)
            x_mse, x_M, x_s = xrfm_fit(X, y, Xt, yt, args.iters)
            rows = {"xrfm": (x_mse, x_M, x_s)}
            for precision in args.precisions:
                rows[f"monosem {precision}"] = ours_fit(X, y, Xt, yt, args.iters, precision)
            title = "single-index (K = 1)" if K == 1 else f"mixed-link K = {K}"
            print(f"\nn = {n}, {title}: predictive directions span {k} dims")
            print(f"  {'':16s} {'test MSE':>10} {'MSE / xrfm':>11} {'fit s':>7} {'time / xrfm':>12} {'top-' + str(k) + ' overlap':>13} {'|cos(u1, v1)|':>14} {'||M - M_xrfm||/||M_xrfm||':>16}")
            for name, (mse, M, s) in rows.items():
                cos_v = abs(float(top_subspace(M, 1)[:, 0] @ model.directions[0].numpy()))
                # compare shapes, not scales: both rescaled to largest eigenvalue 1
                a, b = M / np.linalg.eigvalsh(M)[-1], x_M / np.linalg.eigvalsh(x_M)[-1]
                rel = np.linalg.norm(a - b) / np.linalg.norm(b)
                print(f"  {name:16s} {mse:10.4g} {mse / x_mse:11.3f} {s:7.2f} {s / x_s:12.2f} {subspace_alignment(M, x_M, k):13.3f} {cos_v:14.3f} {rel:16.2e}", flush=True)


if __name__ == "__main__":
    main()
