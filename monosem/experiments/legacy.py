"""The keys of cells computed before the specs were typed (cache versions 1 and 2), used only to
find their results: the recorded long run, and caches written by earlier versions.

Those keys held a flat dictionary of settings in which some names differ from the specs'
(``lr_final``, ``rel_improvement``, ``solver_max_iter``, ``eigenpro``), a setting at its default
could be absent (the training-step revision 1, the paper's separation gamma = 4, a balanced
mixture's Zipf exponent, a solve that never runs EigenPro), and a gated cell's source network
carried its own data settings. :func:`legacy_config` spells a typed job that way.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .specs import PAPER_GAMMA, DataSpec, GatedSpec, KernelSpec, MixtureSpec, NetworkSpec, spec_config

__all__ = ["LEGACY_CACHE_VERSION", "NAMED_RECORDS", "legacy_config", "named_records", "cell_of_named_record"]

#: the cache version of the last flat keys
LEGACY_CACHE_VERSION = 2


def _data(data: DataSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"n_test": data.n_test, "dtype": data.dtype}
    if data.gamma != PAPER_GAMMA:
        out["gamma"] = data.gamma
    if data.zipf is not None:
        out["zipf"] = data.zipf
    return out


def _network(net: NetworkSpec, *, with_step: bool = True) -> dict[str, Any]:
    out = {"activation": net.activation, "width": net.width, "batch": net.batch, "lr": net.lr, "lr_final": net.final_lr,
           "min_steps": net.min_steps, "max_steps": net.max_steps, "eval_every": net.eval_every, "patience_evals": net.patience_evals,
           "target_mse": net.target_mse, "rel_improvement": net.min_rel_improvement}
    return out | ({"step": net.step_revision} if with_step and net.step_revision != 1 else {})


def _kernel(k: KernelSpec) -> dict[str, Any]:
    s = k.solver
    out = {"ridge": s.ridge, "exact_max_n": s.exact_max_n, "target_mse": s.target_mse, "solver_max_iter": s.max_iter,
           "bandwidth": k.bandwidth}
    if k.agop_samples is not None:
        out["agop_samples"] = k.agop_samples
    if s.eigenpro_revision is not None:
        out["eigenpro"] = s.eigenpro_revision
    return out


def _pairs(params: dict[str, Any]) -> list:
    """A nested settings dictionary as those keys stored it: sorted ``[name, value]`` pairs."""
    return [[k, _plain(params[k])] for k in sorted(params)]


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return _pairs(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def legacy_params(job) -> dict[str, Any]:
    """The flat settings dictionary the key of ``job`` held before the specs were typed."""
    data, spec = _data(job.data), job.spec
    if spec is None:
        return data
    if isinstance(spec, NetworkSpec):
        return data | _network(spec)
    if isinstance(spec, MixtureSpec):
        return data | _network(spec.network, with_step=False) | {"n_experts": spec.n_experts, "aux_weight": spec.aux_weight,
                                                                 "router_scale": spec.router_scale}
    if isinstance(spec, KernelSpec):
        return data | _kernel(spec)
    if isinstance(spec, GatedSpec):
        return data | _kernel(spec.local) | {"n_init": spec.n_init, "max_iter": spec.max_iter,
                                             "source": data | _network(spec.source)}
    return data | dataclasses.asdict(spec)  # a registered method's settings, flat as it declared them


def legacy_config(job) -> dict[str, Any] | None:
    """The configuration a result of ``job`` holds when it was keyed before the specs were typed
    (its key is :func:`~monosem.experiments.cache.job_key` of it); ``None`` for a cell on another
    data model than the mixed-link one, which had no such key."""
    if not isinstance(job.data, DataSpec):
        return None
    params = legacy_params(job)
    return {"cache_version": LEGACY_CACHE_VERSION, "method": job.method, "K": job.K, "n": job.n, "run": job.run,
            "params": {k: _plain(v) for k, v in params.items()}}


def _run0(job, results: dict[str, Any]) -> dict[str, Any] | None:
    """A file that is the whole result of run 0."""
    return results if job.run == 0 else None


def _entry(job, results: dict[str, Any]) -> dict[str, Any] | None:
    """The entry of a file's ``entries`` with the job's K, n and run."""
    return next((e for e in results.get("entries", []) if (e["K"], e["n"], e["run"]) == (job.K, job.n, job.run)), None)


def _figure1_stems(job, profile: str) -> list[str]:
    """A Figure 1 run's file: ``figure1_readings_w<width>`` at the cpu profile (every reading),
    ``figure1_readings_<profile>_w<width>`` at another, with ``_<reading>`` for a file of one
    reading other than the balanced one."""
    spec = spec_config(job.spec)  # the reading's name and sizes, as the cell's key holds them
    base = f"figure1_readings_w{spec['width']}" if profile == "cpu" else f"figure1_readings_{profile}_w{spec['width']}"
    one = base + "_" + "".join(ch if ch.isalnum() else "_" for ch in spec["reading"].lower()).strip("_")
    return [base] if spec["reading"] == "balanced" else [base, one]


def _figure1_reading(job, results: dict[str, Any]) -> dict[str, Any] | None:
    """The job's reading in a Figure 1 run's file, when the file ran the job's training: the same
    width, batch, seeds, step revision (none named: 1), updates, rate grid and data sizes, with
    the drawn neurons exactly when the job keeps them."""
    spec, cfg = spec_config(job.spec), results.get("config", {})
    entry = results.get("readings", {}).get(spec["reading"])
    wanted = {"max_steps_relu": spec["max_steps_relu"], "max_steps_other": spec["max_steps_other"], "eval_every": spec["eval_every"],
              "relu_lr_grid": spec["relu_lr_grid"], "n_train": job.data.n, "n_val": job.data.n_val, "n_test": job.data.n_test}
    same = (results.get("width") == spec["width"] and results.get("batch") == spec["batch"]
            and list(results.get("seeds", [])) == spec["seeds"] and results.get("step_revision", 1) == spec["step_revision"]
            and all(cfg.get(k) == v for k, v in wanted.items()))
    if entry is None or not same or ("neurons" in entry) != spec["neurons"]:
        return None
    return entry | {"width": results["width"], "batch": results["batch"], "seeds": results["seeds"]}


def _study_cell(job, results: dict[str, Any]) -> dict[str, Any] | None:
    """The cell of a sensitivity study's file (``{"settings": {label: setting}, "cells": [...]}``)
    whose setting is the job's spec and whose seed is the job's run, as the cell's metrics
    (``rows`` and ``seconds``)."""
    spec = {k: v for k, v in spec_config(job.spec).items() if k != "kind"}  # as the file holds it: tuples are lists
    labels = {label for label, setting in results.get("settings", {}).items() if setting == spec}
    cell = next((c for c in results.get("cells", []) if c["label"] in labels and c["seed"] == job.run), None)
    return None if cell is None else {"rows": cell["rows"], "seconds": cell["seconds"]}


#: results recorded in named files (``monosem/recorded/<name>.json``, :func:`~.recorded.load_recorded` payloads)
#: before they were cells: (method, profile) -> (the files that may hold a job: a stem, or a
#: function of the job and profile giving stems; the job's part of a file's results, or None). A
#: file without its configuration was computed with the profile's (a test checks each file's
#: numbers against the profile's sizes).
NAMED_RECORDS = {
    ("theorem1-dynamics", "paper"): ("theorem1_dynamics_paper", _run0),
    ("gated-metric", "long"): ("gated_metric_long", _entry),
    # Figure 1's sensitivity study: a cell's spec is its own setting, not the profile's sizes
    ("figure1-study", "cpu"): ("figure1_sensitivity_w512", _study_cell),
    ("figure1-reading", "cpu"): (_figure1_stems, _figure1_reading),
    ("figure1-reading", "paper"): (_figure1_stems, _figure1_reading),
}


def named_records(job, profile: str) -> list[str]:
    """The named files that may hold ``job``'s result at ``profile`` from before it was a cell."""
    found = NAMED_RECORDS.get((job.method, profile))
    if found is None:
        return []
    return [found[0]] if isinstance(found[0], str) else found[0](job, profile)


def cell_of_named_record(job, profile: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """``job``'s part of a named payload as its recorded cell (its metrics, its wall time (the part's
    own, else the file's) and date as the timing, the file's profile and machine), or None when the
    file does not hold it."""
    part = NAMED_RECORDS[(job.method, profile)][1](job, payload["results"])
    if part is None:
        return None
    return {"config": job.config(), "metrics": part, "profile": payload["profile"], "machine": payload["machine"],
            "timing": {"seconds": part.get("seconds", payload["seconds"]), "finished": payload["recorded"],
                       "threads": payload["machine"].get("torch_threads"), "device": "cpu"}}
