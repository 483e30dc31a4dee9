"""Training throughput, side by side in one run: Adam updates per second of one network.

    python benchmarks/train.py [--threads 1 2] [--sizes 256x512 1024x1024 2048x2048 4096x4096]
                               [--activations relu reglu] [--seconds 3] [--rounds 3] [--device cpu]
                               [--baseline REF]

For every (width, batch), activation and thread count it times, interleaved in one process:

* ``monosem``   : ``monosem.train.train`` with the hand-derived gradient (``gradients="manual"``,
  the default, :mod:`monosem.train.step`, its buffers in one reused ``StepWorkspace``) at step
  revision ``--revision`` (default ``FASTEST_STEP_REVISION``: row blocks for the wide nets too);
* ``rev 1``     : the same at step revision 1 (the step the recorded long run used: h formed, the
  readout products as matrix-vector products over it);
* ``autograd``  : the same loop with the gradient through ``torch.autograd`` (the path before the
  hand-derived step: ``gradients="autograd"``);
* ``plain``     : the loop a user would write: ``nn.Linear`` layers, ``torch.optim.Adam``, a cosine
  ``LambdaLR`` schedule, a fresh permutation of the training set every epoch;

and, with ``--baseline REF``, ``REF``: the training loop of git commit ``REF`` (e.g. ``138b07c^``,
an earlier loop), imported from ``git archive`` as its own package; and prints steady-state updates/s (after :data:`WARM` updates) with the ratios of monosem
to each. The loops are timed in ``--rounds`` alternating rounds of ``seconds / rounds``
each, and the table gives the median rate of each and the median of the per-round ratios: this
machine's speed drifts (a shared virtual machine: the same loop runs 2.7-5.3 ms per update from
one minute to the next), and a ratio of two measurements taken seconds apart is steadier than
either rate. Training runs on the Figure 2 data (d = 20, n = 20 000) with the Appendix A.2
learning rates; no evaluation inside the timed window.

The arithmetic floor: one update of a width-w network does about 4 B (d + 1) H floating-point
operations in its two first-layer matrix products (H = w, or 2w gated) and 2 B w in the readout
f = h a, and moves the (B, H) activations at least four times: the pre-activations written by
the forward product, read and their derivative written by one fused elementwise pass (which also
forms f), and the derivative read by the weight-gradient product. The script measures the
machine's matrix-product rate (a large square ``mm``) and, for every size, the bandwidth of a copy
of one (B, H) float32 array (cache-resident at the small sizes, as the step's arrays are) on the
same threads, and reports ``floor = flops / rate + 4 B H 4 bytes / bandwidth`` and how far each
path is from it. No PyTorch step reaches it: the fused pass would be a custom kernel
(``torch.compile``'s inductor on this CPU made that pass slower than the eager kernels it fuses:
577 against 489 us at 1 024 x 1 024).
"""

from __future__ import annotations

import argparse
import importlib
import math
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

from monosem.data import mixed_link_model
from monosem.device import get_device
from monosem.models import GATED, MLPStack
from monosem.train import LR_A2, STEP_REVISION, STEP_REVISIONS, TrainData, a2_config, train
from monosem.train.step import FASTEST_STEP_REVISION


def _sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize()


#: updates run before the clock starts (fewer for the largest sizes). The first ~100 updates from
#: the zero readout are several times slower on a CPU (subnormal numbers while the readout is
#: tiny); a long run does not see them.
WARM = 300


def warm_steps(width: int, batch: int) -> int:
    return max(20, min(WARM, int(3e8 / (width * batch))))


def rate(run, dev: torch.device, seconds: float) -> float:
    """Steady-state updates per second of ``run(steps) -> seconds of the last steps``, over about
    ``seconds`` of timed updates."""
    per = run(3) / 3
    n = max(3, int(seconds / max(per, 1e-6)))
    return n / run(n)


def load_baseline(ref: str):
    """The ``monosem`` package of git commit ``ref`` (``git archive``), imported under its own
    name ``monosem_<ref>`` beside today's (its imports are relative), so that one process can time
    both: e.g. the training loop as it was when a throughput target was set."""
    root = Path(tempfile.mkdtemp(prefix="monosem-baseline-"))
    repo = Path(__file__).resolve().parents[1]
    tar = subprocess.run(["git", "-C", str(repo), "archive", ref, "monosem"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=tar, check=True)
    name = "monosem_" + re.sub(r"[^A-Za-z0-9_]", "_", ref)
    (root / "monosem").rename(root / name)
    sys.path.insert(0, str(root))
    pkg = importlib.import_module(name)
    for sub in ("train", "models"):
        importlib.import_module(f"{name}.{sub}")
    return pkg


def monosem_runner(x, y, width, batch, act, dev, gradients, pkg=None, revision=STEP_REVISION, start=None):
    """Today's ``train`` with ``gradients`` ("manual" / "autograd") at step ``revision``, or with
    ``pkg`` (a :func:`load_baseline` package) that package's ``train`` as it was (``gradients``
    and ``revision`` unused). ``start``: the network's initialization and readout rate (a
    :class:`~monosem.experiments.specs.NetworkInit`; default: A.2's)."""
    train_fn, config_fn, stack_cls, data_cls = (train, a2_config, MLPStack, TrainData) if pkg is None else (
        pkg.train.train, pkg.train.a2_config, pkg.models.MLPStack, pkg.train.TrainData)
    extra = {"gradients": gradients} if pkg is None else {}
    revised = {"step_revision": revision} if pkg is None else {}
    data = data_cls(x, y)

    def run(steps: int) -> float:
        warm = warm_steps(width, batch)
        # one update more than is timed: the run's last update is followed by its final
        # evaluation and the restore of the kept checkpoint, which are not training throughput
        cfg = config_fn(act, min_steps=0, max_steps=warm + steps + 1, batch=batch, eval_every=10**9, target_mse=0.0, **revised)
        stack = stack_cls(x.shape[1], width, act, [0], device=dev, **(start.stack_kwargs() if start is not None else {}))
        if start is not None:
            start.scale_values(stack, act)
        clock = {}

        def tick(step: int) -> None:
            if step in (warm, warm + steps):
                _sync(dev)
                clock["t0" if step == warm else "t1"] = time.perf_counter()

        train_fn(stack, data, cfg, progress=False, callback=tick, **extra)
        return clock["t1"] - clock["t0"]

    return run


class _Plain(nn.Module):
    def __init__(self, d: int, width: int, act: str) -> None:
        super().__init__()
        self.act, self.width = act, width
        self.hidden = nn.Linear(d, 2 * width if act in GATED else width)
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        pre = self.hidden(x)
        if self.act == "reglu":
            g, v = pre.chunk(2, dim=-1)
            h = torch.relu(g) * v
        elif self.act == "swiglu":
            g, v = pre.chunk(2, dim=-1)
            h = nn.functional.silu(g) * v
        else:
            h = torch.relu(pre) if self.act == "relu" else nn.functional.gelu(pre)
        return self.out(h).squeeze(-1)


def plain_runner(x, y, width, batch, act, dev):
    n = x.shape[0]

    def run(steps: int) -> float:
        torch.manual_seed(0)
        model = _Plain(x.shape[1], width, act).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=LR_A2[act])
        warm = warm_steps(width, batch)
        total = warm + steps
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda t: 0.01 + 0.99 * 0.5 * (1 + math.cos(math.pi * min(t, total) / total)))
        perm, pos = torch.randperm(n, device=dev), 0
        for step in range(total):
            if step == warm:
                _sync(dev)
                t0 = time.perf_counter()
            if pos + batch > n:
                perm, pos = torch.randperm(n, device=dev), 0
            idx = perm[pos : pos + batch]
            pos += batch
            loss = ((model(x[idx]) - y[idx]) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        _sync(dev)
        return time.perf_counter() - t0

    return run


def _timed(op, dev: torch.device):
    def run(k: int) -> float:
        op()
        _sync(dev)
        t0 = time.perf_counter()
        for _ in range(k):
            op()
        _sync(dev)
        return time.perf_counter() - t0
    return run


def copy_bandwidth(numel: int, dev: torch.device, seconds: float) -> float:
    """Bytes/s read and written by a copy of one float32 array of ``numel`` numbers."""
    src = torch.randn(numel, device=dev)
    dst = torch.empty_like(src)
    return rate(_timed(lambda: dst.copy_(src), dev), dev, seconds) * 2 * numel * 4


def machine_rates(dev: torch.device, seconds: float) -> tuple[float, float]:
    """(matrix-product FLOP/s, copy bandwidth of 64 MiB in bytes/s) of this device on the current
    threads."""
    a = torch.randn(2048, 2048, device=dev)
    b = torch.randn(2048, 2048, device=dev)
    mm = rate(_timed(lambda: a @ b, dev), dev, seconds) * 2 * 2048**3
    return mm, copy_bandwidth(64 * 2**20 // 4, dev, seconds)


#: passes over the (B, H) activations of the floor (see the module docstring)
FLOOR_PASSES = 4


def floor_seconds(width: int, batch: int, act: str, d: int, mm: float, bw: float) -> float:
    """A lower bound on one update: its matrix-product FLOPs at the mm rate plus
    :data:`FLOOR_PASSES` float32 passes over the (B, H) activations at ``bw``, the copy
    bandwidth of one such array."""
    H = 2 * width if act in GATED else width
    flops = 4 * batch * (d + 1) * H + 2 * batch * width
    traffic = FLOOR_PASSES * batch * H * 4
    return flops / mm + traffic / bw


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--sizes", nargs="+", default=["256x512", "1024x1024", "2048x2048", "4096x4096"])
    p.add_argument("--activations", nargs="+", default=["relu", "reglu"])
    p.add_argument("--seconds", type=float, default=3.0, help="timed seconds per measurement (all rounds together)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds of the loops (medians reported)")
    p.add_argument("--device", default=None)
    p.add_argument("--revision", type=int, choices=STEP_REVISIONS, default=FASTEST_STEP_REVISION,
                   help="the step revision of the 'monosem' column")
    p.add_argument("--readings", action="store_true",
                   help="instead: every reading of A.2's initialization (monosem.experiments.questions.init_readings) "
                        "against the default reading, side by side (a readout-rate factor or output scale must not cost speed)")
    p.add_argument("--baseline", metavar="REF", default=None,
                   help="also time the training loop of git commit REF (a fourth column, 'REF', and the ratio "
                        "monosem / REF): e.g. 138b07c^, an earlier loop")
    args = p.parse_args()
    if args.readings:
        return readings_table(args)
    base = load_baseline(args.baseline) if args.baseline else None
    dev = get_device(args.device)
    x, y, _ = mixed_link_model(10, run=0).pool(20_000, run=0, device=dev)
    d = x.shape[1]
    print(f"device {dev}; Figure 2 data, d = {d}, n = {x.shape[0]}; updates per second of one network; "
          f"'monosem' at step revision {args.revision}")
    ref = args.baseline[:9] if base is not None else ""
    print(f"{'threads':>7} {'act':>6} {'width x batch':>14} {'monosem':>9} {'rev 1':>9} {'autograd':>9} {'plain':>9} "
          + (f"{ref:>9} " if base is not None else "")
          + f"{'vs rev 1':>9} {'vs autograd':>12} {'vs plain':>9} " + (f"{'vs ' + ref:>13} " if base is not None else "")
          + f"{'floor':>9} {'of floor':>9}")
    for threads in args.threads:
        if dev.type == "cpu":
            torch.set_num_threads(threads)
        mm, bw = machine_rates(dev, args.seconds / 2)
        print(f"# {threads} thread(s): matrix products {mm / 1e9:.0f} GFLOP/s, copy bandwidth {bw / 1e9:.1f} GB/s at 64 MiB "
              f"(the floor uses the bandwidth at each size's (B, H) array)")
        for act in args.activations:
            for size in args.sizes:
                width, batch = (int(v) for v in size.split("x"))
                runners = {
                    "monosem": monosem_runner(x, y, width, batch, act, dev, "manual", revision=args.revision),
                    "rev1": monosem_runner(x, y, width, batch, act, dev, "manual", revision=1),
                    "autograd": monosem_runner(x, y, width, batch, act, dev, "autograd"),
                    "plain": plain_runner(x, y, width, batch, act, dev),
                }
                if base is not None:
                    runners["base"] = monosem_runner(x, y, width, batch, act, dev, "", pkg=base)
                rounds = [{k: rate(run, dev, args.seconds / args.rounds) for k, run in runners.items()} for _ in range(args.rounds)]
                r = {k: statistics.median(rd[k] for rd in rounds) for k in runners}
                vs_rev1 = statistics.median(rd["monosem"] / rd["rev1"] for rd in rounds)
                vs_autograd = statistics.median(rd["monosem"] / rd["autograd"] for rd in rounds)
                vs_plain = statistics.median(rd["monosem"] / rd["plain"] for rd in rounds)
                H = 2 * width if act in GATED else width
                floor = 1.0 / floor_seconds(width, batch, act, d, mm, copy_bandwidth(batch * H, dev, args.seconds / 4))
                base_rate = base_vs = ""
                if base is not None:
                    base_rate = f"{r['base']:>9.1f} "
                    base_vs = f"{statistics.median(rd['monosem'] / rd['base'] for rd in rounds):>12.2f}x "
                print(f"{threads:>7} {act:>6} {size:>14} {r['monosem']:>9.1f} {r['rev1']:>9.1f} {r['autograd']:>9.1f} {r['plain']:>9.1f} "
                      f"{base_rate}{vs_rev1:>8.2f}x {vs_autograd:>11.2f}x {vs_plain:>8.2f}x {base_vs}"
                      f"{floor:>9.0f} {r['monosem'] / floor:>8.0%}", flush=True)


def readings_table(args) -> None:
    """Updates per second of one network under each registered reading of A.2's initialization,
    timed in alternating rounds beside the default reading, and the median ratio to it."""
    from monosem.experiments.questions.init_readings import DEFAULT_READING, READINGS

    dev = get_device(args.device)
    x, y, _ = mixed_link_model(10, run=0).pool(20_000, run=0, device=dev)
    print(f"device {dev}; updates per second of one network per reading of A.2's initialization, step revision {args.revision}")
    print(f"{'threads':>7} {'act':>6} {'width x batch':>14} {'reading':>26} {'updates/s':>10} {'vs default':>11}")
    for threads in args.threads:
        if dev.type == "cpu":
            torch.set_num_threads(threads)
        for act in args.activations:
            for size in args.sizes:
                width, batch = (int(v) for v in size.split("x"))
                runners = {name: monosem_runner(x, y, width, batch, act, dev, "manual", revision=args.revision,
                                                start=reading.start(width, x.shape[1])) for name, reading in READINGS.items()}
                rounds = [{k: rate(run, dev, args.seconds / args.rounds) for k, run in runners.items()} for _ in range(args.rounds)]
                for name in runners:
                    ratio = statistics.median(rd[name] / rd[DEFAULT_READING.name] for rd in rounds)
                    print(f"{threads:>7} {act:>6} {size:>14} {name:>26} {statistics.median(rd[name] for rd in rounds):>10.1f} "
                          f"{ratio:>10.2f}x", flush=True)


if __name__ == "__main__":
    main()
