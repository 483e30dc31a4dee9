"""Rewrite results stored under the keys of cache versions 1 and 2 under their typed keys.

Before the specs were typed (:mod:`monosem.experiments.specs`, cache version 3) a cell's key held
a flat dictionary of settings, in which some names differ from the specs' (``lr_final``,
``rel_improvement``, ``solver_max_iter``, ``eigenpro``) and a setting at its default could be
absent; and some results were recorded as one named file (``monosem/recorded/<name>.json``) before
they were cells. The package reads neither any more. This script is the one place that still
knows how they were spelled: it rewrites each such file as a cell under its typed key (its
``config`` the typed job's :meth:`~monosem.experiments.cache.Job.config`, its ``key`` and file name
:meth:`~monosem.experiments.cache.Job.key`), leaving its metrics, timing, wall time, machine and
commit as they were.

    python scripts/migrate_recorded.py                 # the recorded cells and named files of the package
    python scripts/migrate_recorded.py --cache PATH    # a result cache (``<cache>/<method>/<key>.json``,
                                                       # with its trained networks ``models/<key>.pt``)
    python scripts/migrate_recorded.py --check         # change nothing; exit 1 when something would change

A cell file is mapped to the typed job its settings spell, checked by spelling that job the
earlier way, which must give the file's configuration back (an unnamed setting was at its default;
a network's initialization was Appendix A.2's, the only one then); a mixture, whose flat key left
out its network's step revision, to the one job of a declared figure (any profile) spelled so. A
named file is mapped part by part to the declared jobs of its method and profile. A file that maps
to no typed job, or whose typed cell exists with another result, is refused: the script names it,
leaves it in place, and exits with status 1. A second run changes nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's package, whose recorded files these are

from monosem.atomic import atomic_torch_save, atomic_write_json  # noqa: E402
from monosem.experiments.cache import Job, config_without_version  # noqa: E402
from monosem.experiments.registry import discover  # noqa: E402
from monosem.experiments.specs import (PAPER_GAMMA, DataSpec, GatedSpec, KernelSpec, MixtureSpec, NetworkSpec,  # noqa: E402
                                       SolverSpec, spec_config)
from monosem.profiles import PROFILE_NAMES, get_profile  # noqa: E402

RECORDED = ROOT / "monosem" / "recorded"
#: the cache version of the last flat keys
LEGACY_CACHE_VERSION = 2


class Refused(Exception):
    """A file this script cannot map to a typed job (its message says why)."""


# ------------------------------------------------------------------ the flat keys, as they were spelled
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


def _plain(value: Any) -> Any:
    """A nested settings dictionary as the flat keys stored it: sorted ``[name, value]`` pairs."""
    if isinstance(value, dict):
        return [[k, _plain(value[k])] for k in sorted(value)]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _legacy_params(job: Job) -> dict[str, Any]:
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
        return data | _kernel(spec.local) | {"n_init": spec.n_init, "max_iter": spec.max_iter, "source": data | _network(spec.source)}
    return data | dataclasses.asdict(spec)  # a registered method's settings, flat as it declared them


def legacy_config(job: Job) -> dict[str, Any] | None:
    """The configuration ``job``'s result held when it was keyed before the specs were typed;
    ``None`` for a cell on another data model than the mixed-link one, which had no such key."""
    if not isinstance(job.data, DataSpec):
        return None
    return {"cache_version": LEGACY_CACHE_VERSION, "method": job.method, "K": job.K, "n": job.n, "run": job.run,
            "params": {k: _plain(v) for k, v in _legacy_params(job).items()}}


def is_legacy(config: Any) -> bool:
    """Whether a stored configuration is spelled the flat way (cache versions 1 and 2)."""
    return isinstance(config, dict) and "params" in config and "spec" not in config


# ------------------------------------------------------------------ from a flat configuration to a typed job
_DATA_NAMES = ("n_test", "dtype", "gamma", "zipf")


def _spelled_network(p: dict[str, Any], step: int | None = None) -> NetworkSpec:
    return NetworkSpec(activation=p["activation"], width=p["width"], batch=p["batch"], lr=p["lr"], final_lr=p["lr_final"],
                       min_steps=p["min_steps"], max_steps=p["max_steps"], eval_every=p["eval_every"],
                       patience_evals=p["patience_evals"], target_mse=p["target_mse"], min_rel_improvement=p["rel_improvement"],
                       step_revision=p.get("step", 1) if step is None else step)


def _spelled_kernel(p: dict[str, Any]) -> KernelSpec:
    solver = SolverSpec(ridge=p["ridge"], exact_max_n=p["exact_max_n"], target_mse=p["target_mse"], max_iter=p["solver_max_iter"],
                        eigenpro_revision=p.get("eigenpro"))
    return KernelSpec(p["bandwidth"], solver, p.get("agop_samples"))


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _spelled_spec(params: dict[str, Any], spec_types: set[type]) -> Any:
    """The spec the flat settings ``params`` (without the data's) spell, of one of ``spec_types``."""
    if not params:
        return None
    if "source" in params:
        source = {k: v for k, v in params["source"] if k not in _DATA_NAMES}
        return GatedSpec(local=_spelled_kernel(params), n_init=params["n_init"], max_iter=params["max_iter"],
                         source=_spelled_network(source))
    if "n_experts" in params:
        return MixtureSpec(network=_spelled_network(params, step=1), n_experts=params["n_experts"],
                           aux_weight=params["aux_weight"], router_scale=params["router_scale"])
    if "activation" in params and NetworkSpec in spec_types:
        return _spelled_network(params)
    if "bandwidth" in params and KernelSpec in spec_types:
        return _spelled_kernel(params)
    own = [t for t in spec_types if t not in (NetworkSpec, MixtureSpec, KernelSpec, GatedSpec)]
    if len(own) != 1:
        raise Refused(f"no one spec type spells the settings {sorted(params)}")
    if any(isinstance(v, list) for v in params.values()):  # a nested spec, flattened to pairs: not spelled back here
        raise Refused(f"{own[0].__name__}'s nested settings {sorted(k for k, v in params.items() if isinstance(v, list))} "
                      "are not spelled back")
    return own[0](**{k: _tuples(v) for k, v in params.items()})


class Jobs:
    """The typed jobs of every declared figure at every profile, by their earlier spelling."""

    def __init__(self) -> None:
        discover()
        from monosem.experiments.sweeps import FIGURES, sweep

        self.by_profile: dict[str, list[Job]] = {}
        self.by_legacy: dict[str, set[Job]] = {}
        self.spec_types: dict[str, set[type]] = {}
        for profile in PROFILE_NAMES:
            jobs: list[Job] = []
            for figure in sorted(FIGURES):
                try:
                    jobs += sweep(figure, profile)
                except ValueError:  # a figure without a grid at this profile
                    continue
            self.by_profile[profile] = list(dict.fromkeys(jobs))
            for job in self.by_profile[profile]:
                self.spec_types.setdefault(job.method, set()).add(type(job.spec))
                old = legacy_config(job)
                if old is not None:
                    self.by_legacy.setdefault(config_without_version(old), set()).add(job)

    def typed(self, config: dict[str, Any]) -> Job:
        """The typed job whose earlier spelling is ``config``, or :class:`Refused`: the job its
        settings spell (they name every setting of a network, kernel or gated cell of those days:
        an unnamed one was at its default, and a network's initialization was A.2's), else the one
        declared job spelled so (a mixture, whose flat key left out its network's step revision)."""
        found = {dataclasses.replace(j, profile="") for j in self.by_legacy.get(config_without_version(config), ())}
        try:
            spelled = self._spelled(config)
        except Refused:
            if len(found) != 1:
                raise
            return found.pop()
        if not isinstance(spelled.spec, MixtureSpec) or spelled in found or not found:
            return spelled
        if len(found) > 1:
            raise Refused(f"its configuration spells {len(found)} declared jobs: {sorted(j.key() for j in found)}")
        return found.pop()

    def _spelled(self, config: dict[str, Any]) -> Job:
        method, params = config.get("method"), dict(config.get("params") or {})
        if method not in self.spec_types:
            raise Refused(f"no declared figure computes method {method!r}")
        data = DataSpec(config["K"], config["n"], config["run"], params.pop("n_test"), params.pop("gamma", PAPER_GAMMA),
                        params.pop("zipf", None), params.pop("dtype"))
        try:
            job = Job(method, data, _spelled_spec(params, self.spec_types[method] - {type(None)}))
        except Refused:
            raise
        except Exception as err:  # noqa: BLE001 - whatever a spec's own checks raise on settings it cannot hold
            raise Refused(f"its settings spell no {method} job ({type(err).__name__}: {err})") from None
        if config_without_version(legacy_config(job)) != config_without_version(config):
            raise Refused(f"the {method} job its settings spell is spelled otherwise")
        return job


# ------------------------------------------------------------------ cell files
def _read(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            record = json.load(fh)
    except (OSError, ValueError) as err:
        raise Refused(f"unreadable ({err})") from None
    if not isinstance(record, dict) or not isinstance(record.get("config"), dict):
        raise Refused("not a result record (no config)")
    return record


def _place(path: Path, record: dict[str, Any], write: bool) -> None:
    """Write ``record`` at ``path`` unless a file there holds its metrics already; a file there
    with other metrics is a conflict, refused."""
    if path.exists():
        held = _read(path)
        if held.get("metrics") != record["metrics"] or config_without_version(held["config"]) != config_without_version(record["config"]):
            raise Refused(f"its typed cell {path} exists and holds another result")
        return
    if write:
        atomic_write_json(path, record)


def migrate_cell(path: Path, jobs: Jobs, *, exact_version: bool, write: bool) -> Job | None:
    """Rewrite one cell file under its typed key (the typed job, or ``None`` when it is typed
    already). ``exact_version``: only cache version 2 (what a cache found), not 1."""
    record = _read(path)
    old = record["config"]
    if not is_legacy(old):
        return None
    if exact_version and old.get("cache_version") != LEGACY_CACHE_VERSION:
        raise Refused(f"cache version {old.get('cache_version')}: computed by code whose results the next version "
                      "marked wrong (never read since); delete it")
    if path.parent.name != old.get("method"):
        raise Refused(f"it holds a {old.get('method')} cell, not one of its folder {path.parent.name}")
    job = jobs.typed(old)
    _place(path.parent / f"{job.key()}.json", record | {"config": job.config(), "key": job.key()}, write)
    if write:
        path.unlink()
    return job


def migrate_model(models: Path, old: str, job: Job, write: bool) -> bool:
    """Move the trained network saved under the earlier key ``old`` to the job's typed key (the
    key it carries too); whether one was moved."""
    path, target = models / f"{old}.pt", models / f"{job.key()}.pt"
    if not path.exists() or target.exists():
        return False
    if write:
        state = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(state, dict) or state.get("key", old) != old:
            raise Refused(f"{path} carries key {state.get('key') if isinstance(state, dict) else None}, not {old}")
        atomic_torch_save(state | {"key": job.key()}, target)
        path.unlink()
    return True


def migrate_cells(base: Path, jobs: Jobs, *, exact_version: bool, models: Path | None, write: bool,
                  refused: list[str]) -> int:
    """Every cell file ``<base>/<method>/<key>.json`` stored under an earlier key, rewritten under
    its typed key; returns how many (a refused file is added to ``refused``)."""
    done = 0
    for path in sorted(base.glob("*/*.json")) if base.is_dir() else ():
        if path.parent.name in ("models", "checkpoints"):  # a cache's trained networks and training checkpoints
            continue
        try:
            job = migrate_cell(path, jobs, exact_version=exact_version, write=write)
            if job is not None and models is not None:
                migrate_model(models, path.stem, job, write)
        except Refused as why:
            refused.append(f"{path}: {why}")
            continue
        done += job is not None
    return done


# ------------------------------------------------------------------ named files (results recorded before they were cells)
def _run0(job: Job, results: dict[str, Any]) -> dict[str, Any] | None:
    """A file that is the whole result of run 0."""
    return results if job.run == 0 else None


def _entry(job: Job, results: dict[str, Any]) -> dict[str, Any] | None:
    """The entry of a file's ``entries`` with the job's K, n and run."""
    return next((e for e in results.get("entries", []) if (e["K"], e["n"], e["run"]) == (job.K, job.n, job.run)), None)


def _figure1_reading(job: Job, results: dict[str, Any]) -> dict[str, Any] | None:
    """The job's reading in a Figure 1 run's file, when the file ran the job's training."""
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


def _study_cell(job: Job, results: dict[str, Any]) -> dict[str, Any] | None:
    """The cell of a sensitivity study's file whose setting is the job's spec and whose seed is
    the job's run, as the cell's metrics (``rows`` and ``seconds``)."""
    spec = {k: v for k, v in spec_config(job.spec).items() if k != "kind"}
    labels = {label for label, setting in results.get("settings", {}).items() if setting == spec}
    cell = next((c for c in results.get("cells", []) if c["label"] in labels and c["seed"] == job.run), None)
    return None if cell is None else {"rows": cell["rows"], "seconds": cell["seconds"]}


def _parts(results: Any, take: Callable) -> int:
    """How many cells a named file's results hold."""
    if take is _entry:
        return len(results.get("entries", []))
    if take is _study_cell:
        return len(results.get("cells", []))
    if take is _figure1_reading:
        return len(results.get("readings", {}))
    return 1


_FIGURE1_FILE = re.compile(r"^figure1_readings_(?:(?P<profile>[a-z]+)_)?w(?P<width>\d+)(?:_[a-z0-9_]+)?$")


def named_file(stem: str) -> tuple[str, str, Callable]:
    """A named file's method, profile and part-taker (what was ``NAMED_RECORDS``)."""
    fixed = {"theorem1_dynamics_paper": ("theorem1-dynamics", "paper", _run0), "gated_metric_long": ("gated-metric", "long", _entry),
             "figure1_sensitivity_w512": ("figure1-study", "cpu", _study_cell)}
    if stem in fixed:
        return fixed[stem]
    match = _FIGURE1_FILE.match(stem)
    if match is not None and (match["profile"] or "cpu") in ("cpu", "paper"):
        return "figure1-reading", match["profile"] or "cpu", _figure1_reading
    raise Refused("no typed method is known for this named file")


def _figure1_candidates(profile: str, stem: str) -> list[Job]:
    """Every reading cell a Figure 1 run's file at ``profile`` may hold."""
    from monosem.experiments.questions.figure1.base import KNOWN_READINGS
    from monosem.experiments.questions.figure1.readings import reading_job
    from monosem.train import STEP_REVISIONS

    P, width = get_profile(profile), int(_FIGURE1_FILE.match(stem)["width"])
    return [reading_job(P, reading, width=width, step_revision=rev, neurons=neurons)
            for reading in KNOWN_READINGS.values() for rev in STEP_REVISIONS for neurons in (False, True)]


def migrate_named(path: Path, jobs: Jobs, *, write: bool) -> int:
    """Rewrite a named file as the cells it holds (each under its typed key, in
    ``cells_<profile>/<method>/``) and remove it; returns how many cells it held."""
    method, profile, take = named_file(path.stem)
    payload = _read_payload(path)
    candidates = [j for j in jobs.by_profile[profile] if j.method == method]
    if method == "figure1-reading":
        candidates += _figure1_candidates(profile, path.stem)
    cells: dict[Job, dict[str, Any]] = {}
    for job in dict.fromkeys(dataclasses.replace(j, profile="") for j in candidates):
        part = take(job, payload["results"])
        if part is not None:
            cells[job] = {"config": job.config(), "key": job.key(), "metrics": part, "profile": payload["profile"],
                          "machine": payload["machine"],
                          "timing": {"seconds": part.get("seconds", payload["seconds"]), "finished": payload["recorded"],
                                     "threads": payload["machine"].get("torch_threads"), "device": "cpu"}}
    held = _parts(payload["results"], take)
    if len(cells) != held:
        raise Refused(f"it holds {held} cells, of which {len(cells)} are cells of declared {method} jobs at profile {profile!r}")
    for job, record in cells.items():
        _place(path.parent / f"cells_{profile}" / method / f"{job.key()}.json", record, write)
    if write:
        path.unlink()
    return len(cells)


def _read_payload(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            payload = json.load(fh)
        missing = [k for k in ("profile", "recorded", "seconds", "machine", "results") if k not in payload]
    except (OSError, ValueError, TypeError) as err:
        raise Refused(f"unreadable ({err})") from None
    if missing:
        raise Refused(f"not a named record (no {', '.join(missing)})")
    return payload


# ------------------------------------------------------------------ the command
def migrate(recorded: Path | None, caches: Iterable[Path], *, write: bool = True) -> tuple[int, list[str]]:
    """Migrate the package's recorded files under ``recorded`` and every cache of ``caches``;
    returns how many files were (``write``) or would be rewritten, and the refused ones."""
    jobs, refused, done = Jobs(), [], 0
    if recorded is not None:
        for cells in sorted(recorded.glob("cells_*")):
            done += migrate_cells(cells, jobs, exact_version=False, models=None, write=write, refused=refused)
        for path in sorted(recorded.glob("*.json")):
            try:
                held = migrate_named(path, jobs, write=write)
                print(f"{path.name}: {held} cell(s)")
                done += 1
            except Refused as why:
                refused.append(f"{path}: {why}")
    for cache in caches:
        if not cache.is_dir():
            refused.append(f"{cache}: no such cache folder")
            continue
        done += migrate_cells(cache, jobs, exact_version=True, models=cache / "models", write=write, refused=refused)
    return done, refused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, action="append", default=[], metavar="PATH",
                        help="migrate this result cache folder (instead of the package's recorded files; may be given twice)")
    parser.add_argument("--recorded", type=Path, default=None, metavar="PATH",
                        help=f"the recorded files' folder (default: {RECORDED.relative_to(ROOT)}, unless --cache is given)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a file would be rewritten")
    args = parser.parse_args(argv)
    recorded = args.recorded if args.recorded is not None else (None if args.cache else RECORDED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the figures' declarations warn about what is not cached: not ours to say here
        done, refused = migrate(recorded, args.cache, write=not args.check)
    where = ", ".join(str(p) for p in ([recorded] if recorded is not None else []) + args.cache)
    print(f"{done} file(s) {'to rewrite' if args.check else 'rewritten'} under their typed keys in {where}")
    for line in refused:
        print(f"refused {line}", file=sys.stderr)
    return 1 if refused or (args.check and done) else 0


if __name__ == "__main__":
    sys.exit(main())
