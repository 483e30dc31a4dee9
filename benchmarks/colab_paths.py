"""Wall times of the paths a Colab user takes, on one device, as JSON.

    python benchmarks/colab_paths.py [--device cuda] [--out timings.json] [--quick]

Each path runs once after a small warm-up (CUDA context, first kernels), timed with the device
synchronized:

* ``figure1_training``: page 03's training at the ``gpu`` profile's Figure 1 sizes (width 2 048,
  batch 2 048) for a fixed number of updates of a ReLU stack of the learning-rate grid's size and
  of one ReGLU network (updates per second, so a whole page can be extrapolated);
* ``specialization_table``: page 03's table for every trained network (the active set, A_j, D_j);
* ``laplace_fit`` / ``rfm_fit``: a global Laplace fit (EigenPro at n = 20 000, the ``gpu``
  profile's smallest size) and a one-iteration RFM fit, with predictions and the AGOP;
* ``gated_predictor``: page 05's MLP-gated local Laplace predictor on a trained ReLU network
  (contributions, K-means gates, per-gate fits, predictions).

``--quick`` shrinks everything (a check that the script runs, e.g. on a CPU or under the CUDA
stand-in). The JSON holds the device, torch's version, every time in seconds and the sizes.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monosem import data, gating, specialization  # noqa: E402
from monosem.device import get_device  # noqa: E402
from monosem.kernels import LaplaceKernelRegressor, RFMRegressor  # noqa: E402
from monosem.models import MLPStack  # noqa: E402
from monosem.train import TrainData, a1_config, a2_config, train  # noqa: E402


def _sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def timed(dev: torch.device, fn):
    """``(result, seconds)`` of ``fn()`` with the device synchronized before and after."""
    _sync(dev)
    t0 = time.perf_counter()
    out = fn()
    _sync(dev)
    return out, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=None, help="cpu, cuda, ... (default: monosem.device.get_device())")
    ap.add_argument("--out", default=None, help="write the JSON here (default: stdout only)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes: check that every path runs")
    args = ap.parse_args(argv)
    dev = get_device(args.device)
    q = args.quick
    width, batch, steps = (64, 128, 20) if q else (2048, 2048, 300)
    n_fit = 1_000 if q else 20_000
    n_gate = 1_000 if q else 20_000
    sizes = {"figure1": {"width": width, "batch": batch, "updates": steps, "relu_stack": 6},
             "kernel_n": n_fit, "gated_n": n_gate}
    times: dict[str, float] = {}
    extra: dict[str, float] = {}

    # warm-up: the device context and the first kernels are not the paths' cost
    warm = MLPStack(20, 16, "relu", [0], device=dev)
    timed(dev, lambda: warm(torch.zeros(8, 20, device=dev)))

    # page 03: Figure 1's networks
    fig1 = data.figure1_model()
    x, y, _ = fig1.sample(max(4 * batch, 8_192), 0, device=dev)
    xv, yv, _ = fig1.sample(2_048, 1, device=dev)
    d1 = TrainData(x, y, xv, yv)
    cfg = a1_config("relu", max_steps=steps, batch=batch, eval_every=max(1, steps // 2))
    relu, t = timed(dev, lambda: train(MLPStack(fig1.d, width, "relu", list(range(6)), device=dev), d1, cfg, progress=False))
    times["figure1_training_relu_x6"] = t
    extra["relu_x6_updates_per_second"] = steps / t
    cfg_g = a1_config("reglu", max_steps=steps, batch=batch, eval_every=max(1, steps // 2))
    reglu, t = timed(dev, lambda: train(MLPStack(fig1.d, width, "reglu", [0], device=dev), d1, cfg_g, progress=False))
    times["figure1_training_reglu_x1"] = t
    extra["reglu_x1_updates_per_second"] = steps / t
    nets = relu.models() + reglu.models()
    _, times["specialization_table"] = timed(
        dev, lambda: [specialization.specialization_table(net, fig1.directions) for net in nets])

    # page 04: global kernel fits
    m = data.mixed_link_model(10)
    X, Y, C = m.pool(max(n_fit, n_gate))
    Xt, Yt, Ct = m.test_set(4_096)

    def laplace():
        est = LaplaceKernelRegressor(solver="eigenpro" if not q else "auto", device=dev).fit(X[:n_fit], Y[:n_fit])
        return est.predict(Xt), est.agop_tensor()

    _, times["laplace_fit"] = timed(dev, laplace)
    _, times["rfm_fit"] = timed(dev, lambda: RFMRegressor(iterations=1, device=dev).fit(X[:n_fit], Y[:n_fit]).predict(Xt))

    # page 05: a gated predictor on a trained ReLU network
    cfg2 = a2_config("relu", min_steps=steps, max_steps=steps, batch=min(batch, 1_024), eval_every=max(1, steps // 2))
    src = train(MLPStack(m.d, min(width, 1_024), "relu", [0], device=dev), TrainData(X[:n_gate], Y[:n_gate]), cfg2, progress=False)
    times["gated_source_training"] = src.seconds
    mlp = src.models()[0]
    _, times["gated_predictor"] = timed(
        dev, lambda: gating.MLPGatedRegressor(mlp, local="laplace", n_gates=10).fit(X[:n_gate], Y[:n_gate]).predict(Xt))

    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.processor() or platform.machine()
    out = {"device": str(dev), "device_name": name, "torch": torch.__version__, "quick": q, "sizes": sizes,
           "seconds": {k: round(v, 4) for k, v in times.items()}, "rates": {k: round(v, 2) for k, v in extra.items()}}
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
