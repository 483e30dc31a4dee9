"""Appendix A.2's cosine horizon: over how many updates the networks' learning rate decays.

A.2 decays each network's rate by cosine from its first value to its second (1/100 of it) and
stops training after 20 000-200 000 updates, at training MSE 4e-4 or on a plateau; it does not
say over how many updates the cosine runs. The sweeps decay over the update cap, ``max_steps``
(200 000), so that the schedule does not depend on when a network stops; a network that stops
early has then run near its initial rate throughout.

This module measures the other reading on recorded cells: the same network, data and seeds, the
cosine ending at the update where the recorded run stopped (its own length), the final rate held
after it, and the stopping rules unchanged. A cell of method ``horizon`` is one such retraining;
its spec is the source cell's network and the horizon in updates.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from ...checks import check_int
from ...profiles import Profile
from ...tables import span
from ...train import TrainConfig
from ..cache import Job, ResultCache
from ..specs import NetworkSpec
from ..families.networks import train_mlps
from ..recorded import load_recorded_cells
from ..registry import register_method, register_rows
from ..sweeps import Figure, register_figure, sweep
from .sample_efficiency import FIGURE2_MLPS, findings

__all__ = ["METHOD", "HorizonSpec", "ABLATION_KS", "ABLATION_RUNS", "horizon_job", "source_of", "compute_horizon",
           "horizon_rows", "recorded_horizon", "horizon_table", "findings_by_horizon", "horizon_numbers"]

#: the cell's method: a Figure 2 network retrained with the cosine over its own length
METHOD = "horizon"
#: the cells retrained: Figure 2's ReLU and ReGLU networks at these K, the smallest n, these runs
ABLATION_KS = (2, 10, 50)
ABLATION_RUNS = (0, 1)


@dataclass(frozen=True)
class HorizonSpec:
    """A Figure 2 network (``network``, its A.2 protocol) whose cosine decays over
    ``schedule_steps`` updates instead of ``network.max_steps`` (the rate then stays at its final
    value until a stopping rule ends the run)."""

    network: NetworkSpec
    schedule_steps: int

    def __post_init__(self) -> None:
        check_int(self.schedule_steps, "schedule_steps", 1, self.network.max_steps, what="at most the network's max_steps")

    # the network's architecture, as :func:`~..families.networks.train_mlps` and :func:`~..families.networks.load_mlp` read it
    @property
    def activation(self) -> str:
        return self.network.activation

    @property
    def width(self) -> int:
        return self.network.width

    @property
    def start(self):
        """The network's initialization and readout rate (:class:`~..specs.NetworkInit`)."""
        return self.network.start

    @property
    def label(self) -> str:
        """The cell in words (:meth:`~..cache.Job.label`)."""
        return f"{self.activation}, cosine over {self.schedule_steps} updates"

    def train_config(self) -> TrainConfig:
        """The network's A.2 :class:`~monosem.train.TrainConfig` with the cosine over ``schedule_steps``."""
        return dataclasses.replace(self.network.train_config(), schedule_steps=self.schedule_steps)


def horizon_job(source: Job, schedule_steps: int) -> Job:
    """The retraining of the MLP cell ``source`` with the cosine over ``schedule_steps`` updates."""
    return Job(METHOD, source.data, HorizonSpec(source.spec, int(schedule_steps)), source.profile)


def source_of(job: Job) -> Job:
    """The Figure 2 cell a ``horizon`` cell retrains."""
    return Job(f"mlp-{job.spec.activation}", job.data, job.spec.network, job.profile)


def compute_horizon(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    """Train the cell's network (Appendix A.2 but for the horizon) and evaluate it as a Figure 2
    cell is: its test MSE, stop step and reason, training curve."""
    (metrics,) = train_mlps([job], cache)
    return metrics


def _sources(P: Profile) -> list[Job]:
    sizes = P.sample_efficiency
    if sizes is None:
        return []
    Ks = [K for K in ABLATION_KS if K in sizes.Ks]
    runs = [r for r in ABLATION_RUNS if r < sizes.runs]
    return sweep("fig2", P, Ks=Ks, ns=[min(sizes.ns)], runs=runs, methods=list(FIGURE2_MLPS)) if Ks and runs else []


def _recorded_sources(P: Profile) -> dict[Job, dict[str, Any]]:
    return load_recorded_cells(_sources(P), P.name)


def _jobs_of(sources: Mapping[Job, dict[str, Any]]) -> list[Job]:
    """A ``horizon`` cell for every recorded source cell (its own length: the recorded run's stop step)."""
    return [horizon_job(j, r["metrics"]["stop_step"]) for j, r in sources.items()]


def _figure_jobs(P: Profile) -> list[Job]:
    """The figure's cells at ``P``: one per recorded source cell (none where no source is recorded)."""
    return _jobs_of(_recorded_sources(P))


def horizon_rows(records: Mapping[Job, dict[str, Any]]) -> list[dict[str, Any]]:
    """The exported rows of ``horizon`` cells: the grid point, the network, its horizon and how
    it trained (the source cell's numbers are Figure 2's export)."""
    rows = []
    for job, rec in sorted(records.items(), key=lambda kv: (kv[0].K, kv[0].n, kv[0].run, kv[0].spec.activation)):
        m = rec["metrics"]
        rows.append({"method": job.method, "K": job.K, "n": job.n, "run": job.run, "activation": job.spec.activation,
                     "width": job.spec.width, "schedule_steps": job.spec.schedule_steps, "max_steps": job.spec.network.max_steps,
                     "test_mse": m["test_mse"], "train_mse": m["train_mse"], "stop_reason": m["stop_reason"], "stop_step": m["stop_step"],
                     "seconds": rec["timing"]["seconds"], "key": job.key()})
    return rows


register_method(METHOD, compute=compute_horizon)
register_figure(Figure(METHOD, "The cosine horizon: decay over the update cap or over a network's own length (Appendix A.2)",
                       (METHOD,), "sample_efficiency", jobs=_figure_jobs))
register_rows(METHOD, horizon_rows)


def recorded_horizon(profile: Profile) -> dict[Job, dict[str, Any]]:
    """The recorded ``horizon`` cells of ``profile`` and their source cells: ``{job: record}``."""
    sources = _recorded_sources(profile)
    cells = load_recorded_cells(_jobs_of(sources), profile.name)
    return cells | {source_of(j): sources[source_of(j)] for j in cells}


def horizon_table(records: Mapping[Job, dict[str, Any]]) -> pd.DataFrame:
    """Per retrained cell (K, network, run): updates run and test MSE with the cosine over the cap
    (the recorded cell) and over its own length, and the ratio of the two test MSEs."""
    rows = []
    for job, rec in records.items():
        if job.method != METHOD or source_of(job) not in records:
            continue
        src, own = records[source_of(job)]["metrics"], rec["metrics"]
        rows.append({"K": job.K, "network": job.spec.activation, "run": job.run,
                     "updates, cap horizon": src["stop_step"], "test MSE, cap horizon": src["test_mse"],
                     "updates, own horizon": own["stop_step"], "stopped by": own["stop_reason"],
                     "test MSE, own horizon": own["test_mse"], "own / cap": own["test_mse"] / src["test_mse"]})
    if not rows:
        return pd.DataFrame()
    return pd.DataFrame(rows).sort_values(["K", "network", "run"]).set_index(["K", "network", "run"])


#: the findings of Figure 6's networks, which the horizon ablation does not retrain
_FIGURE6_ROWS = ["2'", "gelu~relu", "swiglu"]


def findings_by_horizon(long_records: Mapping[Job, dict[str, Any]], records: Mapping[Job, dict[str, Any]], Ks: Iterable[int],
                        n: int) -> pd.DataFrame:
    """Findings 1a, 1b and 2 (:func:`.sample_efficiency.findings`) judged twice on the runs whose
    every network was retrained: with the recorded networks (cosine over the cap) and with the
    retrained ones in their place (own horizon); the kernels and oracles are the same cells. Per
    finding: the verdict and its evidence under each horizon. Empty before a run is complete."""
    cells = {j: r for j, r in records.items() if j.method == METHOD and j.n == n}
    Ks = sorted(Ks)
    have = {(j.K, f"mlp-{j.spec.activation}", j.run) for j in cells}
    runs = [r for r in {j.run for j in cells} if all((K, m, r) in have for K in Ks for m in FIGURE2_MLPS)]
    if not runs:
        return pd.DataFrame()
    cap = {j: r for j, r in long_records.items() if j.n == n and j.run in runs and j.K in Ks}
    own = cap | {source_of(j): r for j, r in cells.items() if j.run in runs}
    tables = {label: findings(recs, Ks, n).table().drop(index=_FIGURE6_ROWS, errors="ignore") for label, recs in (("cap", cap), ("own", own))}
    out = tables["cap"][["claim"]].copy()
    for label, name in (("cap", "cosine over the cap"), ("own", "cosine over its own length")):
        out[f"verdict, {name}"] = tables[label]["verdict"]
        out[f"evidence, {name}"] = tables[label]["evidence"]
    return out


_NAMES = {"relu": "ReLU", "reglu": "ReGLU"}


def _range(values: Iterable[float], fmt: str = ".2f") -> str:
    return span(values, fmt, empty="not recorded")


def horizon_numbers(table: pd.DataFrame, verdicts: pd.DataFrame) -> dict[str, str]:
    """The numbers the page's prose quotes: how many networks were retrained and over how many
    runs, the range and geometric mean of their test MSE under their own horizon over the cap's
    (and its geometric mean per network), in how many the own horizon is lower and in how many it
    stops earlier, and which verdicts (:func:`findings_by_horizon`) the
    horizon changes."""
    keys = ("hz_cells", "hz_runs", "hz_range", "hz_gmean", "hz_by_network", "hz_better", "hz_earlier", "hz_verdicts", "hz_conclusion")
    if not len(table):
        return dict.fromkeys(keys, "not recorded")
    r = table["own / cap"]
    gmean = float(np.exp(np.log(r).mean()))
    by_network = ", ".join(f"{_NAMES.get(net, net)} {float(np.exp(np.log(v).mean())):.2f}" for net, v in r.groupby(level="network"))
    earlier = int((table["updates, own horizon"] < table["updates, cap horizon"]).sum())
    cap, own = "verdict, cosine over the cap", "verdict, cosine over its own length"
    changed = [f"finding {k} goes from “{row[cap]}” to “{row[own]}”" for k, row in verdicts.iterrows() if row[cap] != row[own]]
    said = ("; ".join(changed) if changed else f"every verdict ({', '.join(verdicts.index)}) is the same under both horizons"
            ) if len(verdicts) else "no run has every network retrained yet"
    conclusion = ("the cap horizon the sweeps use does not handicap the networks: on average they do better with it"
                  if gmean > 1 else "the cap horizon the sweeps use handicaps the networks: on average they do better with their own")
    return dict(zip(keys, (str(len(table)), str(table.index.get_level_values("run").nunique()), _range(r), f"{gmean:.2f}", by_network,
                           f"{int((r < 1).sum())} of {len(r)}", f"{earlier} of {len(r)}", said, conclusion)))
