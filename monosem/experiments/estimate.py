"""How long a run takes: two estimates.

**On this machine, from its own measurements** (:func:`paper_cost_estimate`): how long would the paper profile take
here? An extrapolation from the cells this machine measured.

Every cached result records its wall time. From the cells of the largest training size of the
current profile we extrapolate each method to the paper's grid with the cost model of its
algorithm:

* an MLP cell costs (width x batch x updates): Adam steps of a one-hidden-layer network; the paper
  trains at most 200 000 updates, and we charge the measured number of updates of the small cells
  scaled by max_steps (an upper bound: the paper's runs stop at a plateau);
* a kernel cell costs n^2 per pass over the training set (kernel matrix-vector products, which
  dominate EigenPro above 11 000 points) times the same number of passes as measured, so
  (n_paper / n)^2;
* the Bayes cell is free.

This is an order-of-magnitude estimate for *this* machine (one process), not a GPU measurement;
the page says so. A run on a GPU replaces it with measured times.

**On a device, from counted work** (:func:`page_seconds`, the model that sizes the ``gpu``
profile; ``python -m monosem estimate``). No GPU has been lent to this project yet, so the
``gpu`` profile is sized by this model instead of a measurement. The model is deliberately simple, and every constant is stated:

- **One MLP update** is memory-bound at the sizes of the paper (the inner dimension d = 20 or 40
  is tiny next to width and batch): it streams the ``(batch, H)`` activations a fixed number of
  times (:data:`ACTIVATION_PASSES`; H = width, or 2 x width for gated units) and pays a fixed
  number of kernel launches per step of a stack. Time = max(bytes / bandwidth, flops / flop rate)
  per network, plus launches x latency per step of the stack. A stack computes every member at
  every step, stopped or not, until its last member stops, so a stack costs ``steps x M``.
- **A kernel fit** (Laplace, RFM, a per-cluster oracle) is timed on one thread of this project's
  CPU (the recorded long run, :data:`CPU_RFM_SECONDS`), as a power law in n, and divided by the
  device's bandwidth ratio to that thread (kernel evaluation, ``exp`` of distance blocks, is
  bandwidth-bound too).

Calibration: :data:`CPU_THREAD` is one core of a 2-core CPU (10 GB/s); ``benchmarks/train.py``
prints the measured time of an update beside this model's at the sizes the profiles train. The
model overestimates a CPU update (an upper bound, kept: the book's budgets are upper bounds). The T4's constants are its data sheet's
(320 GB/s, 8.1 TFLOP/s float32) at an assumed efficiency (70 % and 50 %) and a 10 µs launch: an
estimate, not a measurement, to be replaced by ``benchmarks/gpu_session.sh``'s numbers when a GPU
run exists.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping

import pandas as pd

from ..profiles import Profile, get_profile
from .cache import Job
from .specs import NetworkSpec
from . import registry
from ..tables import thousands
from .sweeps import figure_of, sweep

__all__ = [
    "core_seconds",
    "remaining_seconds",
    "capped_network_seconds",
    "paper_cost_estimate",
    "paper_cost_frame",
    "DeviceModel",
    "CPU_THREAD",
    "T4",
    "DEVICES",
    "ACTIVATION_PASSES",
    "mlp_update_seconds",
    "moe_update_seconds",
    "kernel_fit_seconds",
    "page_seconds",
    "pages",
    "estimate_frame",
    "estimate_basis",
]


def _other_runs_key(job: Job) -> tuple:
    """What a cell shares with the same cell at another run: its method, settings and data but the run."""
    return job.method, job.spec, dataclasses.replace(job.data, run=0)


def _measured_in_cpu_time(record: Mapping) -> bool:
    """Whether :func:`core_seconds` of ``record`` is its CPU time (not a wall time, which may count
    waits for a shared core)."""
    timing = record.get("timing", {})
    return timing.get("device", "cpu") == "cpu" and timing.get("threads") == 1 and timing.get("cpu_seconds") is not None


def core_seconds(record: Mapping) -> float | None:
    """The compute a cell's record measured, in core-seconds: the CPU time of a one-thread CPU
    cell (its wall time also counts the time the process waited for a shared or paused core),
    else its wall time; ``None`` where the record has no timing."""
    timing = record.get("timing", {})
    if _measured_in_cpu_time(record):
        return float(timing["cpu_seconds"])
    return None if timing.get("seconds") is None else float(timing["seconds"])


def _update_seconds(measured: Mapping[Job, dict]) -> dict[tuple, float]:
    """Core-seconds per update of every network (method and settings) that ``measured`` trained,
    the mean over its cells at any K, n or run; where some of them are measured in CPU time, over
    those only."""
    rates: dict[tuple, list[tuple[bool, float]]] = defaultdict(list)
    for job, rec in measured.items():
        seconds, steps = core_seconds(rec), rec.get("metrics", {}).get("stop_step")
        if isinstance(job.spec, NetworkSpec) and seconds is not None and steps:
            rates[(job.method, job.spec)].append((_measured_in_cpu_time(rec), seconds / steps))
    out = {}
    for key, pairs in rates.items():
        best = [r for cpu, r in pairs if cpu] or [r for _, r in pairs]
        out[key] = sum(best) / len(best)
    return out


def remaining_seconds(missing: Iterable[Job], measured: Mapping[Job, dict]) -> tuple[float, int]:
    """How long the cells ``missing`` would take, one thread each, from the cells ``measured``
    (``{job: record}``, cached or recorded): each missing cell at the mean :func:`core_seconds` of
    the same cell at the other runs measured (for the long profile's five runs, a good guide: the
    settings and sizes are the same, only the seeds differ). A network is charged the mean number
    of updates of its other runs at its speed per update measured in CPU time anywhere
    (:func:`_update_seconds`): an early run's wall time can count waits for a shared core.
    Returns the seconds and the number of missing cells that no run measured (left out of the
    seconds)."""
    times: dict[tuple, list[float]] = defaultdict(list)
    steps: dict[tuple, list[int]] = defaultdict(list)
    for job, rec in measured.items():
        seconds = core_seconds(rec)
        if seconds is not None:
            times[_other_runs_key(job)].append(float(seconds))
            if isinstance(job.spec, NetworkSpec) and rec.get("metrics", {}).get("stop_step"):
                steps[_other_runs_key(job)].append(int(rec["metrics"]["stop_step"]))
    rates = _update_seconds(measured)
    total, unknown = 0.0, 0
    for job in missing:
        key = _other_runs_key(job)
        same = times.get(key)
        if not same:
            unknown += 1
        elif steps.get(key) and (job.method, job.spec) in rates:
            total += sum(steps[key]) / len(steps[key]) * rates[(job.method, job.spec)]
        else:
            total += sum(same) / len(same)
    return total, unknown


def capped_network_seconds(missing: Iterable[Job], measured: Mapping[Job, dict]) -> tuple[float, int]:
    """An upper bound on the network cells of ``missing`` that no run of the same cell measured:
    each charged to its update cap (``spec.max_steps``) at the core-seconds per update of the
    measured networks of the same method and settings at any K, n or run (:func:`_update_seconds`;
    an update costs the same at every n: width x batch; the training-set evaluations every
    ``eval_every`` updates, a few per cent at the ladder's n, are not scaled). Returns the seconds
    and how many cells they cover; cells of other methods, or with no such measured network, are
    left out."""
    rates = _update_seconds(measured)
    same_cell = {_other_runs_key(job) for job, rec in measured.items() if core_seconds(rec) is not None}
    total, covered = 0.0, 0
    for job in missing:
        per_update = rates.get((job.method, job.spec))
        if per_update and _other_runs_key(job) not in same_cell:
            total += job.spec.max_steps * per_update
            covered += 1
    return total, covered


def paper_cost_estimate(records: dict[Job, dict], figure: str, profile: str | Profile) -> dict[str, float]:
    """Estimated seconds per method to compute ``figure`` at the paper profile on this machine."""
    P, paper = get_profile(profile), get_profile("paper")
    se, pse = P.sample_efficiency, paper.sample_efficiency
    n_max = max(job.n for job in records)
    per_cell: dict[str, list[float]] = defaultdict(list)
    for job, rec in records.items():
        # a method without settings (the Bayes predictor) is free
        if job.n == n_max and job.spec is not None:
            per_cell[job.method].append(float(rec["timing"]["seconds"]))
    paper_jobs = sweep(figure, paper)
    out: dict[str, float] = {}
    for method in figure_of(figure).methods:
        if method not in per_cell:
            continue
        secs = sum(per_cell[method]) / len(per_cell[method])
        total = 0.0
        for job in (j for j in paper_jobs if j.method == method):
            if isinstance(job.spec, NetworkSpec):
                scale = (pse.width * pse.batch * pse.max_steps) / (se.width * se.batch * se.max_steps)
            else:
                scale = (job.n / n_max) ** 2
            total += secs * scale
        out[method] = total
    return out


def paper_cost_frame(seconds: dict[str, float]) -> pd.DataFrame:
    """:func:`paper_cost_estimate` (merged over figures) as a table of hours per method, longest
    first, with the total as the last row."""
    hours = pd.Series(seconds, name="hours at the paper profile").sort_values(ascending=False) / 3600
    return pd.concat([hours, pd.Series({"total": hours.sum()}, name=hours.name)]).rename_axis("method").to_frame()

@dataclass(frozen=True)
class DeviceModel:
    """A device as the cost model sees it: effective bandwidth (bytes/s), effective float32 rate
    (FLOP/s) and the latency of one kernel launch (s)."""

    name: str
    bandwidth: float
    flops: float
    launch: float


#: one thread of this project's 2-core CPU (calibrated against benchmarks/train.py, see above)
CPU_THREAD = DeviceModel("one CPU thread (this machine)", bandwidth=10e9, flops=50e9, launch=0.0)
#: an NVIDIA T4 (Colab's free GPU): 320 GB/s and 8.1 TFLOP/s nominal at 70 % and 50 %, 10 us launches
T4 = DeviceModel("NVIDIA T4 (estimated)", bandwidth=0.7 * 320e9, flops=0.5 * 8.1e12, launch=10e-6)
DEVICES = {"cpu-thread": CPU_THREAD, "t4": T4}

#: passes over the (batch, H) activations per update: forward (pre-activation, activation,
#: readout), backward (output gradient, activation derivative, two matmuls), Adam on the
#: first layer; a gated unit also multiplies the two branches forward and backward
ACTIVATION_PASSES = {"relu": 12, "gelu": 14, "reglu": 16, "swiglu": 18}
#: kernel launches per step of a stack (forward, backward, Adam, the batch gather): counted
#: from the step of monosem.train.step, rounded up
LAUNCHES_PER_STEP = 40
#: one-thread CPU seconds of a global RFM fit (three AGOP updates, EigenPro above 11 000 points)
#: at n = 10 000, 20 000, 50 000: the recorded long run (cells_long/rfm, K = 10 and 50, mean)
CPU_RFM_SECONDS = {10_000: 69.0, 20_000: 295.0, 50_000: 1481.0}
#: a Laplace fit is one solve where RFM makes four and three AGOPs: the recorded oracles'
#: Laplace / RFM time ratio is 1/6 to 1/5 (K = 10, n = 10 000 to 100 000)
LAPLACE_SHARE = 0.2


def mlp_update_seconds(width: int, batch: int, d: int, activation: str, device: DeviceModel, stack: int = 1) -> float:
    """Seconds of one update of a stack of ``stack`` networks (the model above)."""
    H = 2 * width if activation in ("reglu", "swiglu") else width
    bytes_ = ACTIVATION_PASSES[activation] * batch * H * 4
    flops = 6 * batch * d * H + 6 * batch * width
    per_network = max(bytes_ / device.bandwidth, flops / device.flops)
    return stack * per_network + LAUNCHES_PER_STEP * device.launch


#: a mixture-of-experts update against the dense first layer it evaluates (the model above at
#: width E m: :class:`~monosem.models.MoE` computes every expert's pre-activations): the routing
#: (softmax, argmax, gathers), the load-balancing loss and autograd's bookkeeping: the largest
#: ratio of a measured to a modelled update of page 10's mixtures on one CPU thread, rounded up
MOE_UPDATE_FACTOR = 2.5
#: kernel launches per step of a mixture's stack: autograd's forward and backward of the routing
#: and the experts (about 40 operations each way) and Adam on six tensors; an estimate
MOE_LAUNCHES_PER_STEP = 120


def moe_update_seconds(n_experts: int, expert_width: int, batch: int, d: int, device: DeviceModel, stack: int = 1) -> float:
    """Seconds of one update of a stack of ``stack`` top-1 mixtures of ``n_experts`` ReLU experts
    of width ``expert_width``: :data:`MOE_UPDATE_FACTOR` times a dense ReLU update of width E m
    (:func:`mlp_update_seconds`, without its launches), plus :data:`MOE_LAUNCHES_PER_STEP`
    launches."""
    dense = mlp_update_seconds(n_experts * expert_width, batch, d, "relu", device, stack) - LAUNCHES_PER_STEP * device.launch
    return MOE_UPDATE_FACTOR * dense + MOE_LAUNCHES_PER_STEP * device.launch


def _cpu_rfm_seconds(n: int) -> float:
    """One-thread RFM seconds at ``n``: the power law through the recorded times."""
    ns = sorted(CPU_RFM_SECONDS)
    slope = math.log(CPU_RFM_SECONDS[ns[-1]] / CPU_RFM_SECONDS[ns[0]]) / math.log(ns[-1] / ns[0])
    return CPU_RFM_SECONDS[ns[0]] * (n / ns[0]) ** slope


#: the kernel fits the model times: RFM (four solves, three AGOPs) and one Laplace solve, as a
#: share of an RFM fit
FIT_SHARES = {"rfm": 1.0, "laplace": LAPLACE_SHARE}


def kernel_fit_seconds(method: str, n: int, device: DeviceModel, clusters: int = 1) -> float:
    """Seconds of one kernel fit on ``n`` points: a kernel of :data:`FIT_SHARES`, global
    (``clusters=1``) or one per cluster on n / clusters points each (oracles, gated predictors)."""
    if method not in FIT_SHARES:
        raise ValueError(f"method={method!r} must be one of {sorted(FIT_SHARES)}")
    per = _cpu_rfm_seconds(max(1, n // clusters)) * clusters * FIT_SHARES[method]
    return per * CPU_THREAD.bandwidth / device.bandwidth


def pages() -> list[str]:
    """The pages whose heavy work a cost model counts (registered by their questions'
    modules, :func:`~.registry.register_cost`), in page order."""
    registry.discover()
    return sorted(registry.COSTS)


def page_seconds(page: str, profile: str | Profile, device: str | DeviceModel) -> dict[str, float]:
    """The estimated seconds of ``page``'s heavy work at ``profile`` on ``device``, by part."""
    if page not in pages():
        raise ValueError(f"page={page!r} has no cost model; known: {pages()}")
    if isinstance(device, str):
        if device not in DEVICES:
            raise ValueError(f"device={device!r} is not modelled; use one of {sorted(DEVICES)}")
        device = DEVICES[device]
    P = get_profile(profile)
    return {part: seconds for _, cost in registry.COSTS[page] for part, seconds in cost(P, device).items()}


def estimate_frame(profile: str | Profile, device: str | DeviceModel = "t4") -> pd.DataFrame:
    """Estimated minutes per page at ``profile`` on ``device``: one row per page, the total and
    the part each kind of work takes ("of which", minutes)."""
    dev = DEVICES[device] if isinstance(device, str) else device
    rows = []
    for page in pages():
        parts = page_seconds(page, profile, dev)
        rows.append({"page": page, "estimated minutes": sum(parts.values()) / 60,
                     "of which (minutes)": ", ".join(f"{k} {v / 60:.0f}" for k, v in parts.items())})
    return pd.DataFrame(rows).set_index("page")


def estimate_basis(profile: str | Profile, device: str | DeviceModel = "t4") -> str:
    """What :func:`estimate_frame`'s minutes rest on: which measurements and which assumptions,
    with the constants the model used (printed under the table by ``python -m monosem estimate``)."""
    P = get_profile(profile)
    dev = DEVICES[device] if isinstance(device, str) else device
    ns = sorted(CPU_RFM_SECONDS)
    recorded = " / ".join(f"{CPU_RFM_SECONDS[n]:.0f}" for n in ns)
    sizes = " / ".join(thousands(n) for n in ns)
    cap = thousands(P.sample_efficiency.max_steps)
    lines = [
        f"What these minutes rest on (profile {P.name!r}, {dev.name}):",
        f"- the device: {dev.bandwidth / 1e9:.0f} GB/s effective bandwidth, {dev.flops / 1e12:.2f} TFLOP/s effective float32, "
        f"{dev.launch * 1e6:.0f} us per kernel launch"
        + (" -- the T4 data sheet's 320 GB/s and 8.1 TFLOP/s at an assumed 70 % and 50 % efficiency and an assumed "
           "launch latency: assumptions, not measurements (no GPU run has measured them)" if dev is T4 else
           " -- calibrated on this project's CPU (the update model overestimates its measured updates by up to 3x)"),
        f"- networks: one update streams the (batch, H) float32 activations {min(ACTIVATION_PASSES.values())}-"
        f"{max(ACTIVATION_PASSES.values())} times (by activation) and pays {LAUNCHES_PER_STEP} launches per step of a "
        "stack (mixtures of experts: "
        f"{MOE_UPDATE_FACTOR:g}× a dense update and {MOE_LAUNCHES_PER_STEP} launches); counted from the code, not timed. "
        f"Every network is charged to its update cap ({cap} A.2 updates; Figure 1's fixed lengths), an upper bound: "
        "A.2 runs stop earlier at the target or a plateau",
        f"- kernel fits (RFM, Laplace, oracles, gated local predictors): measured one-thread CPU times of a global RFM fit, "
        f"{recorded} s at n = {sizes} (the recorded long run), a power law in n between them, a Laplace fit "
        f"{LAPLACE_SHARE:g} of an RFM fit (the recorded oracles' ratio), then divided by the device's bandwidth ratio to "
        f"that thread ({dev.bandwidth / CPU_THREAD.bandwidth:.0f}×): assumes kernel evaluation is bandwidth-bound on both",
        "- not counted: data generation, evaluations, plots, the Bayes cells, Python overhead, and a fresh Colab "
        "session's install",
    ]
    return "\n".join(lines)
