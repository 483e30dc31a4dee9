"""The monosem command line: ``python -m monosem`` (or the ``monosem`` console script).

    monosem profiles                           the profiles and their main sizes, one row each
    monosem run FIGURE --profile P [--jobs N]  compute every missing cell of FIGURE (resumable)
    monosem status FIGURE --profile P          what is cached and what is missing
    monosem plot FIGURE --profile P [--out F]  draw FIGURE from the cache
    monosem record FIGURE --profile P          copy FIGURE's cached cells to monosem/recorded/
    monosem export FIGURE --profile P [--format csv|json] [--recorded] [--out F]
                                               the numbers behind FIGURE, one row per cell

    monosem readings --profile P [--readings NAME ...] [--record]
                                               the Figure 1 table under readings of the initialization
    monosem study figure1 [--part I K] [--record] the Figure 1 sensitivity study
    monosem estimate --profile P --device D    the cost model's minutes per page

FIGURE is one of fig2, fig4, fig6, regime (the regime map: profile long), the figures of pages 09 and
10, or one an experiments module registers. Results live in ``--cache`` (default ``$MONOSEM_CACHE`` or
``results/cache``; an empty path is refused). The commands that only read the cache (plot, export,
record) stop with an error naming it when it does not exist; ``status`` then reports the recorded
cells and none cached; ``run`` and ``record --restore`` create it, and say so, and refuse a cache
they cannot write before computing anything. An export with nothing to export says what to run
first and exits with status 1. A list option given twice (``--n 500 --n 1000``) takes both.

One module for the command line: one function per sub-command (:data:`COMMANDS`), the parser
built from one function per command group.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .profiles import PROFILE_NAMES, get_profile

__all__ = ["main", "profiles_table"]


class CLIError(Exception):
    """A mistake the command line reports in one line (``monosem: error: ...``, exit status 1)."""


class _Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` with every option's default, except those that mean "not given" (None, False)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.default is False:
            return action.help or ""
        return super()._get_help_string(action)


def _cache_path(text: str) -> Path:
    """A ``--cache`` folder: any path but an empty one (which would cache into the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the cache folder is empty; name a folder (default: $MONOSEM_CACHE, else results/cache)")
    return Path(text)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose ``--help`` shows the defaults (:class:`_Formatter`)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    ap = _Parser(prog="monosem", description="Run and inspect the experiments of the monosem book.")
    ap.add_argument("--version", action="version", version=f"monosem {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)  # sub-commands are _Parser too
    sub.add_parser("profiles", help="print the run profiles: one row each, with their main sizes")
    _figure1_parsers(sub)
    estimate = sub.add_parser("estimate", help="estimated minutes per page at a profile on a device (a cost model)")
    estimate.add_argument("--profile", default="gpu", choices=PROFILE_NAMES, help="the profile whose pages are estimated")
    estimate.add_argument("--device", default="t4", help="a modelled device: t4 or cpu-thread")
    _sweep_parsers(sub)
    return ap


def _figure1_parsers(sub) -> None:
    """The Figure 1 commands: ``readings`` and ``study``."""
    readings = sub.add_parser("readings", help="the Figure 1 table under each reading of the paper's initialization (Section 3.1)")
    readings.add_argument("--profile", default="cpu", choices=PROFILE_NAMES, help="the Figure 1 sizes to start from")
    readings.add_argument("--width", type=int, default=None, help="override the profile's width (default: the profile's)")
    readings.add_argument("--record", action="store_true",
                          help="record the cells in monosem/recorded/cells_<profile>/ (training resumes from checkpoints in the cache)")
    readings.add_argument("--cache", type=_cache_path, default=None, help="result cache folder (default: $MONOSEM_CACHE or results/cache)")
    readings.add_argument("--readings", nargs="+", action="extend", default=None, metavar="NAME",
                          help="only these readings (default: all); e.g. --profile paper --readings balanced is Figure 1 at the paper's scale")
    readings.add_argument("--step-revision", type=int, default=None, metavar="R",
                          help="the training step's revision (default: the profile's); a recorded table whose config names none was computed with 1")
    study = sub.add_parser("study", help="the Figure 1 sensitivity study (Section 3.1): what moves the table, and how far")
    study.add_argument("which", choices=("figure1",), help="which study")
    study.add_argument("--cache", type=_cache_path, default=None, help="result cache folder (default: $MONOSEM_CACHE, else results/cache)")
    study.add_argument("--part", type=int, nargs=2, default=(0, 1), metavar=("I", "K"),
                       help="compute every K-th cell of the study from the I-th, when missing (K workers on disjoint cells)")
    study.add_argument("--record", action="store_true",
                       help="copy the cached cells to monosem/recorded/cells_cpu/figure1-study/ (computes nothing)")


def _figure_args(p: argparse.ArgumentParser, extra: tuple[str, ...] = ()) -> None:
    """The arguments every figure command shares: the figure and the cells to select."""
    # no argparse choices: the figures are declared by the question modules, found when one is
    # named (monosem.experiments.registry.discover); an unknown name is a one-line error
    p.add_argument("figure", metavar="FIGURE", help="which figure's sweep" + (" or page" if extra else "") + ": "
                   + ", ".join(("any figure a question module declares (fig2, fig4, fig6, regime, ...)", *extra)))
    p.add_argument("--profile", default="cpu", choices=PROFILE_NAMES, help="the sizes to run or read (monosem profiles)")
    p.add_argument("--cache", type=_cache_path, default=None, help="result cache folder (default: $MONOSEM_CACHE, else results/cache)")
    p.add_argument("--K", type=int, nargs="+", action="extend", default=None, help="only these cluster counts (default: all of the profile's)")
    p.add_argument("--methods", nargs="+", action="extend", default=None, help="only these methods (default: all of the figure's)")
    p.add_argument("--runs", type=int, nargs="+", action="extend", default=None, help="only these runs (default: all of the profile's)")
    p.add_argument("--n", type=int, nargs="+", action="extend", default=None, help="only these training sizes (default: all of the profile's)")


def _sweep_parsers(sub) -> None:
    """The figure commands: ``run``, ``status``, ``plot``, ``record`` and ``export``."""
    from .experiments.runner import EXECUTORS

    run = sub.add_parser("run", help="compute every missing cell of a figure")
    _figure_args(run)
    run.add_argument("--jobs", type=int, default=1, help="parallel workers (process pool or SLURM array)")
    run.add_argument("--executor", choices=EXECUTORS, default=None,
                     help="inprocess (default for --jobs 1), process (default otherwise), slurm, slurm-local")
    run.add_argument("--slurm-partition", default=None, help="SLURM partition (default: the cluster's)")
    run.add_argument("--slurm-gpus", type=int, default=None, help="GPUs per SLURM task (default: none requested)")
    run.add_argument("--slurm-timeout-min", type=int, default=240, help="wall-time limit of each SLURM task, in minutes")
    status = sub.add_parser("status", help="what is cached, missing and recorded, per method")
    _figure_args(status)
    status.add_argument("--missing", action="store_true", help="also list every missing cell")
    plot = sub.add_parser("plot", help="draw a figure from the cache")
    _figure_args(plot)
    plot.add_argument("--out", type=Path, default=None, help="output image (default: FIGURE-PROFILE.png)")
    record = sub.add_parser("record", help="copy a figure's cached cells to the package's recorded results")
    _figure_args(record)
    record.add_argument("--restore", action="store_true",
                        help="the other way: put the recorded cells the cache lacks back into the cache")
    record.add_argument("--replace", action="store_true",
                        help="write a cached result over a recorded cell that differs from it (default: keep the recorded one)")
    export = sub.add_parser("export", help="write the numbers behind a figure (one row per cell)")
    _figure_args(export)
    export.add_argument("--format", choices=("csv", "json"), default="csv", help="output format")
    export.add_argument("--recorded", action="store_true", help="the cells shipped with the package, not the cache")
    export.add_argument("--out", type=Path, default=None, help="output file (default: standard output)")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return _dispatch(args)
    except CLIError as err:  # a missing cache, nothing to export: one line, exit status 1
        print(f"monosem: error: {err}", file=sys.stderr)
        return 1
    except ValueError as err:  # bad grids, profiles, methods: a clear one-line message
        parser.error(str(err))
        return 2  # pragma: no cover - parser.error exits
    except OSError as err:  # read-only cache, full disk, a bad --out: one line naming the file
        print(f"monosem: error: {err.strerror or err} ({err.filename or 'no file name'})", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("monosem: interrupted; every finished cell is cached: run the same command again to resume", file=sys.stderr)
        return 130


def _cache_source(args: argparse.Namespace) -> str:
    """Where the cache folder's path came from, for a message."""
    import os

    if args.cache is not None:
        return "--cache"
    return "$MONOSEM_CACHE" if os.environ.get("MONOSEM_CACHE") else "the default, results/cache"


def _selection(args: argparse.Namespace) -> str:
    """The command-line options that chose the cells, to repeat them in a suggested command."""
    parts = [f"--profile {args.profile}"]
    for flag, values in (("--K", args.K), ("--n", args.n), ("--runs", args.runs), ("--methods", args.methods)):
        if values:
            parts.append(f"{flag} {' '.join(map(str, values))}")
    if args.cache is not None:
        parts.append(f"--cache {args.cache}")
    return " ".join(parts)


def _open_cache(args: argparse.Namespace):
    """The result cache of ``--cache``, else of ``$MONOSEM_CACHE`` (an empty one is an error in
    one line), else ``results/cache``."""
    from .experiments.cache import ResultCache

    try:
        return ResultCache(args.cache)
    except ValueError as err:
        raise CLIError(str(err)) from None


def _require_cache(args: argparse.Namespace, cache, first: str | None = None) -> None:
    """A command that reads the cache stops when its folder does not exist (rather than report
    an empty cache: the path is more likely mistyped than fresh). ``first``: what computes into
    it (default: ``monosem run`` of the figure)."""
    if not cache.root.exists():
        first = first or f"monosem run {args.figure} {_selection(args)}"
        raise CLIError(f"cache folder {cache.root} does not exist (from {_cache_source(args)}); "
                       f"compute into it first ({first}) or name another with --cache")
    if not cache.root.is_dir():
        raise CLIError(f"cache folder {cache.root} is not a folder (from {_cache_source(args)})")


def _create_cache(args: argparse.Namespace, cache) -> None:
    """A command that writes the cache creates its folder, saying so in one line, and stops
    before computing anything when it cannot write there."""
    import tempfile

    if not cache.root.exists():
        cache.root.mkdir(parents=True)
        print(f"monosem: created the cache folder {cache.root} (from {_cache_source(args)})", file=sys.stderr)
    elif not cache.root.is_dir():
        raise CLIError(f"cache folder {cache.root} is not a folder (from {_cache_source(args)})")
    try:  # a real write: permissions, a read-only file system and a full disk alike
        with tempfile.TemporaryFile(dir=cache.root, prefix=".monosem-write-check-"):
            pass
    except OSError as err:
        raise CLIError(f"cache folder {cache.root} is not writable (from {_cache_source(args)}: "
                       f"{err.strerror or err}); name another with --cache") from None


def _nothing_to_export(args: argparse.Namespace, cache) -> str:
    """The one line of an export that found no cell: what to run first."""
    if args.recorded:
        from .experiments.recorded import load_recorded_cells
        from .experiments.sweeps import sweep

        have = [p for p in PROFILE_NAMES if p != args.profile and _has_recorded(load_recorded_cells, sweep, args.figure, p)]
        hint = f"; recorded at profile {', '.join(have)} (--profile {have[0]} --recorded)" if have else ""
        return (f"nothing to export: no recorded cell of {args.figure} at profile {args.profile!r} matches the selection{hint}; "
                f"or compute the cells (monosem run {args.figure} {_selection(args)}) and export without --recorded")
    return (f"nothing to export: no cached cell of {args.figure} at profile {args.profile!r} in {cache.root}; "
            f"run it first: monosem run {args.figure} {_selection(args)}")


def _has_recorded(load_recorded_cells, sweep, figure: str, profile: str) -> bool:
    try:
        return bool(load_recorded_cells(sweep(figure, profile), profile))
    except ValueError:  # a figure the profile does not declare (the regime map outside long)
        return False


def profiles_table():
    """The profiles as a pandas DataFrame, one row per profile: the main sizes of Figure 1
    (Section 3.1), Figures 2 and 6 (Section 3.2: cluster counts, training sizes, the MLPs' width, batch
    and update cap, runs) and Figure 4 (Section 3.3)."""
    import pandas as pd

    from .tables import thousands

    def grid(values) -> str:
        return ", ".join(thousands(v) for v in values)

    rows = {}
    for name in PROFILE_NAMES:
        P = get_profile(name)
        fig1, fig2, fig4 = P.specialization, P.sample_efficiency, P.gates
        rows[name] = {
            "Fig 1 width": thousands(fig1.width),
            "Fig 1 n": thousands(fig1.n_train),
            "Fig 1 seeds": len(fig1.seeds),
            "Fig 2/6 K": grid(fig2.Ks),
            "Fig 2/6 n": grid(fig2.ns),
            "MLP width": thousands(fig2.width),
            "MLP batch": thousands(fig2.batch),
            "max steps": thousands(fig2.max_steps),
            "runs": fig2.runs,
            "Fig 4 K": grid(fig4.Ks),
            "Fig 4 n": grid(fig4.ns),
            "Fig 4 runs": fig4.runs,
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "profile"
    return table


def _emit(args: argparse.Namespace, text: str, what: str) -> int:
    """An export's text to ``--out`` (saying what it wrote) or to standard output."""
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {what} of {args.figure} ({args.profile}) to {args.out}", file=sys.stderr)
    return 0


def _study(args: argparse.Namespace) -> int:
    """``monosem study figure1``: compute the sensitivity study's cells (Section 3.1, A.1) into the
    cache or, with ``--record``, record the cached ones at the cpu profile."""
    from .experiments.questions.figure1.study import RECORDED_PROFILE, run_study, study_jobs
    from .experiments.recorded import record_cells, recorded_cells_dir

    cache = _open_cache(args)
    i, k = args.part
    if not (k >= 1 and 0 <= i < k):
        raise ValueError(f"--part I K needs 0 <= I < K, got {i} {k}")
    if args.record:
        _require_cache(args, cache, first="monosem study figure1")
        n_rec, n_missing = record_cells(study_jobs(), cache, RECORDED_PROFILE)
        if n_rec == 0:
            raise CLIError(f"no cell of the figure1 study is cached in {cache.root}; run: monosem study figure1")
        print(f"figure1 study: {n_rec} cells recorded in {recorded_cells_dir(RECORDED_PROFILE)}, {n_missing} not computed yet")
        return 0
    _create_cache(args, cache)
    result = run_study(cache=cache, part=(i, k))
    print(f"{len(result['cells'])} of {len(study_jobs())} cells of the figure1 study are cached in {cache.root}")
    return 0


def _profiles(args: argparse.Namespace) -> int:
    """``monosem profiles``: one row per profile, then each one's description."""
    print(profiles_table().to_string())
    print()
    for name in PROFILE_NAMES:
        print(f"{name}: {get_profile(name).description}")
    print("every size: python -c 'from monosem.profiles import get_profile; print(get_profile(\"cpu\"))'")
    return 0


def _readings(args: argparse.Namespace) -> int:
    """``monosem readings``: the Figure 1 table under each reading of the initialization, one cell
    per reading (computed, or read from the cache; ``--record`` ships them)."""
    from .experiments.questions.figure1.base import KNOWN_READINGS, READINGS
    from .experiments.questions.figure1.readings import ablation_frame, ablation_summary, compute_reading, reading_jobs
    from .experiments.recorded import record_cells
    from .experiments.runner import run_jobs

    P = get_profile(args.profile)
    if args.width is not None and args.width < 1:
        raise ValueError(f"--width must be a positive integer, got {args.width}")
    bad = [n for n in args.readings or () if n not in KNOWN_READINGS]
    if bad:
        raise ValueError(f"--readings {bad} are not known; use some of {list(KNOWN_READINGS)}")
    chosen = READINGS if args.readings is None else tuple(KNOWN_READINGS[n] for n in args.readings)
    jobs = reading_jobs(P, chosen, width=args.width, step_revision=args.step_revision)
    cache = _open_cache(args)
    _create_cache(args, cache)
    records = run_jobs(jobs, compute_reading, cache, desc="Figure 1 readings")
    first = next(iter(records.values()))["metrics"]
    result = {"width": first["width"], "batch": first["batch"], "seeds": first["seeds"],
              "readings": {job.spec.name: rec["metrics"] for job, rec in records.items()}}
    print(ablation_frame(result).to_string())
    print(ablation_summary(result).to_string(float_format="{:.3g}".format))
    if args.record:
        n, _ = record_cells(jobs, cache, args.profile)
        print(f"recorded {n} cells of figure1-readings at profile {args.profile!r}")
    return 0


def _estimate(args: argparse.Namespace) -> int:
    """``monosem estimate``: the cost model's minutes per page."""
    from .experiments.estimate import DEVICES, estimate_basis, estimate_frame

    if args.device not in DEVICES:
        raise ValueError(f"--device {args.device!r} is not modelled; use one of {sorted(DEVICES)}")
    print(f"profile {args.profile!r} on {DEVICES[args.device].name}: the heavy work of each page, "
          "networks charged to their update cap (an upper bound; see monosem.experiments.estimate)")
    print(estimate_frame(args.profile, args.device).to_string(float_format="{:.0f}".format))
    print()
    print(estimate_basis(args.profile, args.device))
    return 0


def _figure_cells(args: argparse.Namespace, *, writes: bool = False, reads: bool = True):
    """The cache and the selected jobs of a figure command. A command that ``writes`` creates the
    cache folder; one that ``reads`` it requires it to exist."""
    from .experiments.sweeps import figure_of, sweep

    figure_of(args.figure)  # a clear error for an unknown figure, before any folder is touched
    for name in ("K", "methods", "runs", "n"):  # a value given twice is one selection
        if getattr(args, name) is not None:
            setattr(args, name, list(dict.fromkeys(getattr(args, name))))
    cache = _open_cache(args)
    jobs = sweep(args.figure, args.profile, Ks=args.K, methods=args.methods, runs=args.runs, ns=args.n)
    if writes:
        _create_cache(args, cache)
    elif reads:
        _require_cache(args, cache)
    return cache, jobs


def _status(args: argparse.Namespace) -> int:
    """``monosem status``: cached, missing and recorded cells per method."""
    from .experiments.specs import network_of
    from .experiments.recorded import load_recorded_cells
    from .experiments.sweeps import figure_of
    from .tables import count

    cache, jobs = _figure_cells(args, reads=False)
    if cache.root.exists() and not cache.root.is_dir():
        raise CLIError(f"cache folder {cache.root} is not a folder (from {_cache_source(args)})")
    unique = list(dict.fromkeys(jobs))
    done, missing = cache.status(unique)  # no folder: nothing cached, and nothing created
    recorded = load_recorded_cells(unique, args.profile)
    absent = "" if cache.root.exists() else f" (no such folder yet, from {_cache_source(args)})"
    print(f"{figure_of(args.figure).title}, profile {args.profile!r}, cache {cache.root}{absent}")
    damaged = f" ({len(cache.damaged)} of them damaged: moved aside, a run recomputes them)" if cache.damaged else ""
    print(f"{len(done)} of {len(unique)} cells cached, {len(missing)} missing{damaged}; {len(recorded)} recorded in the package")
    done_set = set(done)
    for method in dict.fromkeys(j.method for j in unique):
        mine = [j for j in unique if j.method == method]
        c = sum(j in done_set for j in mine)
        r = sum(j in recorded for j in mine)
        print(f"  {method:<15} {c:>4} cached {len(mine) - c:>4} missing {r:>4} recorded")
    if missing:
        from .experiments.estimate import capped_network_seconds, remaining_seconds
        from .experiments.methods import networks_to_retrain

        measured = dict(recorded)
        for job in done:
            if job not in measured:
                try:
                    measured[job] = cache.load(job)
                except FileNotFoundError:  # damaged since the scan: moved aside, counted as missing next time
                    pass
        # a gated cell first trains its source network where the cache holds no weights for it
        retrain = networks_to_retrain(missing, cache)
        if retrain:
            print(f"{count(len(retrain), 'source network')} of the missing gated cells to train first (their weights are not in this "
                  "cache: a recorded cell carries a network's metrics, never its weights)")
        work = missing + retrain
        seconds, unknown = remaining_seconds(work, measured)
        capped, covered = capped_network_seconds(work, measured)
        if unknown == len(work):
            print("missing cells: no estimate of their time (no other run of the same cells is measured)")
        else:
            unmeasured = f"; {unknown} of them with no measured run, left out" if unknown else ""
            networks = ", source networks included" if retrain else ""
            print(f"missing cells: about {seconds / 3600:.1f} core-hours at one thread{networks}, from the same cells' other runs{unmeasured}")
        if covered:
            print(f"  of those left out, {count(covered, 'network')}: at most {capped / 3600:.1f} core-hours, each at its update cap at the "
                  "measured speed of the same network at another K, n or run")
    if args.missing:
        for job in missing:
            net = network_of(job)  # the ladder's rungs differ in width and batch: name both
            start = f" ({net.start.words})" if net and net.start.words else ""
            print(f"  missing: {job.label()}" + (f" width {net.width} batch {net.batch}{start}" if net else ""))
    return 0


def _export(args: argparse.Namespace) -> int:
    """``monosem export``: the numbers behind a figure (or a page's record), one row per cell."""
    from .experiments.export import columns_of, export_rows, write_rows
    from .experiments.figures import cached_records
    from .experiments.recorded import load_recorded_cells
    cache, jobs = _figure_cells(args, reads=not args.recorded)
    if args.recorded:
        records = load_recorded_cells(jobs, args.profile)
    else:
        records = cached_records(args.figure, args.profile, cache, Ks=args.K, methods=args.methods, runs=args.runs, ns=args.n)
    if not records:
        raise CLIError(_nothing_to_export(args, cache))
    rows = export_rows(args.figure, args.profile, records)
    return _emit(args, write_rows(rows, args.format, columns_of(args.figure)), f"{len(records)} cells")


def _record(args: argparse.Namespace) -> int:
    """``monosem record``: cached cells into the package's recorded results (or back)."""
    from .experiments.recorded import record_cells, recorded_cells_dir, restore_cells

    cache, jobs = _figure_cells(args, writes=args.restore)
    if args.restore:
        n = restore_cells(jobs, cache, args.profile)
        print(f"{args.figure}: {n} recorded cells restored into {cache.root}")
        return 0
    n_rec, n_missing = record_cells(jobs, cache, args.profile, replace=args.replace)
    print(f"{args.figure}: {n_rec} cells recorded in {recorded_cells_dir(args.profile)}, {n_missing} not computed yet")
    return 0


def _run(args: argparse.Namespace) -> int:
    """``monosem run``: compute every missing cell of a figure."""
    from .experiments.figures import run_figure
    from .profiles import warn_without_cuda

    if args.executor == "slurm":
        from .experiments.runner import check_slurm

        try:
            check_slurm()
        except RuntimeError as err:
            raise CLIError(f"--executor slurm: {err}") from None
    cache, jobs = _figure_cells(args, writes=True)
    warn_without_cuda(args.profile)
    slurm = {"timeout_min": args.slurm_timeout_min}
    if args.slurm_partition:
        slurm["slurm_partition"] = args.slurm_partition
    if args.slurm_gpus is not None:
        slurm["gpus_per_node"] = args.slurm_gpus
    if args.executor in ("slurm", "slurm-local"):
        slurm["slurm_array_parallelism"] = args.jobs  # --jobs: how many array tasks run at once
    run_figure(args.figure, args.profile, cache=cache, executor=args.executor, n_jobs=args.jobs, slurm=slurm,
               Ks=args.K, methods=args.methods, runs=args.runs, ns=args.n)
    print(f"{args.figure}: all {len(dict.fromkeys(jobs))} cells cached in {cache.root}")
    return 0


def _plot(args: argparse.Namespace) -> int:
    """``monosem plot``: draw a figure from the cache."""
    from .experiments.figures import plot_figure

    cache, jobs = _figure_cells(args)
    out = args.out or Path(f"{args.figure}-{args.profile}.png")
    fig = plot_figure(args.figure, args.profile, cache=cache, Ks=args.K, methods=args.methods)
    fig.savefig(out, bbox_inches="tight")
    unique = list(dict.fromkeys(jobs))
    _, missing = cache.status(unique)
    partial = f"; {len(missing)} of {len(unique)} cells are not computed yet (`monosem status --missing` lists them)" if missing else ""
    print(f"wrote {out}{partial}")
    return 0


#: the sub-commands, one function each
COMMANDS = {"profiles": _profiles, "readings": _readings, "study": _study, "estimate": _estimate, "run": _run,
            "status": _status, "plot": _plot, "record": _record, "export": _export}


def _dispatch(args: argparse.Namespace) -> int:
    return COMMANDS[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
