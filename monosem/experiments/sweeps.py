"""Every figure of Section 3 as a declared sweep: the grid K x n x run x method at a profile.

``sweep(figure, "cpu")`` lists the jobs of a figure at the cpu profile. A figure is declared in
its question's module (:func:`register_figure`), its methods in theirs
(:func:`~.registry.register_method`); a module may add a method to a figure declared elsewhere
(:func:`extend_figure`). The network and kernel cells of Figures 2, 4 and 6 (and of the regime map)
with the same settings are the same jobs (one cache entry), so a trained MLP is shared between
the figures.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..device import default_dtype
from ..profiles import Profile, SampleEfficiencySizes, get_profile
from .cache import Job
from .specs import DataSpec, GatedSpec, KernelSpec, NetworkSpec, SolverSpec
from .registry import discover, method_of

__all__ = ["FIGURES", "Figure", "register_figure", "extend_figure", "figure_of", "sweep", "method_spec", "with_solver",
           "may_run_eigenpro", "EIGENPRO_REVISION", "data_spec"]


@dataclass(frozen=True)
class Figure:
    """A figure's methods and where its grid comes from in a :class:`~monosem.profiles.Profile`."""

    name: str
    title: str
    methods: tuple[str, ...]
    #: the grid: the Profile field holding Ks / ns / runs / n_test, or a function of the profile
    #: returning such a grid (a figure declared outside :class:`~monosem.profiles.Profile`)
    sizes: str | Callable[[Profile], Any]
    #: the figure's jobs at a profile, for a figure whose cells are not the mixed-link grid
    #: K x n x run x method (a question's own data and specs); ``None``: built from the grid
    jobs: Callable[[Profile], list[Job]] | None = None
    #: the data-model settings the grid sweeps besides K and n (:class:`~.specs.DataSpec` fields,
    #: e.g. the separation gamma): ``variants(grid) -> [{field: value}]``; ``None``: the paper's
    variants: Callable[[Any], list[dict]] | None = None
    #: the horizontal line drawn in every panel (e.g. the label-noise variance), ``None``: none
    floor: float | None = None

    def grid(self, P: Profile):
        """The figure's grid at profile ``P`` (``None`` when the profile declares none)."""
        return self.sizes(P) if callable(self.sizes) else getattr(P, self.sizes)


#: the declared figures, by name (each registered by its question's module)
FIGURES: dict[str, Figure] = {}
#: methods added to a figure by modules other than its own, by figure name (:func:`extend_figure`)
EXTENSIONS: dict[str, tuple[str, ...]] = {}


def register_figure(fig: Figure) -> Figure:
    """Declare a figure (its methods, registered with
    :func:`~monosem.experiments.registry.register_method`, and its grid), for :func:`sweep`, the
    runner, the cache and the command line."""
    old = FIGURES.get(fig.name)
    if old is not None and old != fig:
        raise ValueError(f"figure {fig.name!r} is declared already")
    FIGURES[fig.name] = fig
    return fig


def extend_figure(figure: str, *methods: str) -> None:
    """Add ``methods`` to the grid of ``figure`` (declared in another module, before or after this
    call): its cells are swept, run, exported and drawn with the figure's own."""
    EXTENSIONS[figure] = tuple(dict.fromkeys(EXTENSIONS.get(figure, ()) + methods))


def figure_of(figure: str) -> Figure:
    """The declared figure ``figure`` with every method added to it (:func:`extend_figure`),
    after importing every module that declares figures and methods."""
    discover()
    if figure not in FIGURES:
        raise ValueError(f"figure={figure!r} is not a known figure; use one of {sorted(FIGURES)}")
    fig = FIGURES[figure]
    extra = tuple(m for m in EXTENSIONS.get(figure, ()) if m not in fig.methods)
    return dataclasses.replace(fig, methods=fig.methods + extra) if extra else fig


def _grid(fig: Figure, P: Profile):
    sizes = fig.grid(P)
    if sizes is None:
        raise ValueError(f"profile {P.name!r} has no {fig.sizes} grid (figure {fig.name!r}); use profile 'long'")
    return sizes


def method_spec(method: str, P: Profile, network: tuple[int, int] | None = None,
                sizes: SampleEfficiencySizes | None = None, **options: Any) -> Any:
    """Every setting of a method beyond its data, at profile ``P``, as its typed spec (part of the
    cache key), made by the method's registered ``params``. ``network``: the (width, batch) of a
    network cell (default: the grid's); ``sizes``: the grid whose training protocol and solver
    settings apply (default ``P.sample_efficiency``, which Figure 4 shares); ``options``: a
    method's own (e.g. a mixture's ``n_experts``)."""
    se = sizes if sizes is not None else P.sample_efficiency
    m = method_of(method)
    if m.params is None:
        raise ValueError(f"method={method!r} has no settings of its own on a mixed-link grid: its figure builds its jobs")
    if network is not None:
        options["network"] = network
    return m.params(P, se, **options)


def sweep(
    figure: str,
    profile: str | Profile = "cpu",
    *,
    Ks: Sequence[int] | None = None,
    methods: Sequence[str] | None = None,
    runs: Sequence[int] | None = None,
    ns: Sequence[int] | None = None,
) -> list[Job]:
    """The jobs of ``figure`` at ``profile``, optionally restricted to some K, methods, runs or
    training sizes."""
    fig = figure_of(figure)
    P = get_profile(profile)
    if fig.jobs is not None:
        return _restricted(fig.jobs(P), figure, P, Ks=Ks, methods=methods, runs=runs, ns=ns)
    sizes = _grid(fig, P)
    where = f"the {figure} grid of profile {P.name!r}"
    grid_K = _restrict(Ks, sizes.Ks, lambda bad: f"K={bad} not in {where}: {list(sizes.Ks)}")
    meths = _restrict(methods, fig.methods, lambda bad: f"methods {bad} are not part of {figure}; use some of {list(fig.methods)}")
    all_runs = _restrict(runs, range(sizes.runs), lambda bad: f"runs {bad} not in {list(range(sizes.runs))} for profile {P.name!r}")
    grid_n = _restrict(ns, sizes.ns, lambda bad: f"n={bad} not in {where}: {list(sizes.ns)}")
    # a grid may name several (width, batch) of its networks (the regime map's); else the profile's
    networks = sizes.network_sizes() if hasattr(sizes, "network_sizes") else (None,)
    specs = {}
    for method in meths:
        spec = method_spec(method, P)
        for net in (networks if isinstance(spec, NetworkSpec) else (None,)):
            specs[(method, net)] = spec if net is None else method_spec(method, P, net)
    variants = fig.variants(sizes) if fig.variants is not None else [{}]
    jobs = [
        Job(method, data, with_solver(spec, method, data), P.name)
        for variant in variants
        for K in grid_K
        for n in grid_n
        for r in all_runs
        for data in (data_spec(K, n, r, sizes.n_test, variant),)
        for (method, _), spec in specs.items()
        if _declared(sizes, method, n)
    ]
    if not jobs:  # every requested value lies in the grid, but the budget's cut removes them all
        cut = {f: getattr(sizes, f) for f in ("method_max_n",) if getattr(sizes, f, ())}
        raise ValueError(f"no cell of {where} has Ks={list(grid_K)}, ns={list(grid_n)}, runs={list(all_runs)}, "
                         f"methods={list(meths)}; its budget cut: {cut}")
    return jobs


def _restricted(jobs: list[Job], figure: str, P: Profile, **only: Sequence | None) -> list[Job]:
    """A figure's own jobs restricted to some K, methods, runs or training sizes (each checked
    against what the figure has at profile ``P``)."""
    attr = {"Ks": "K", "methods": "method", "runs": "run", "ns": "n"}
    for name, requested in only.items():
        if requested is None:
            continue
        have = sorted({getattr(j, attr[name]) for j in jobs})
        _restrict(requested, have, lambda bad, name=name, have=have:
                  f"{attr[name]}={bad} not in the {figure} cells of profile {P.name!r}: {have}")
        jobs = [j for j in jobs if getattr(j, attr[name]) in set(requested)]
    return jobs


def data_spec(K: int, n: int, run: int, n_test: int, variant: dict | None = None) -> DataSpec:
    """A cell's data at the working precision (:func:`~monosem.device.default_dtype`)."""
    return DataSpec(int(K), int(n), int(run), int(n_test), dtype=str(default_dtype()).removeprefix("torch."), **(variant or {}))


def _declared(sizes, method: str, n: int) -> bool:
    """Whether the grid ``sizes`` has this method's cell at ``n`` (a profile's budget cut)."""
    includes = getattr(sizes, "includes", None)
    return includes is None or includes(method, n)


#: the revision of the EigenPro iteration (:mod:`monosem.kernels.eigenpro`), named in the key of
#: every cell that may run it, so that no cell computed before a change of the iteration is
#: reused (a cell solved exactly keeps its key and its result). Revision 2 judges divergence by
#: the training MSE of the iterate on a fixed subset of rows against the best so far (revision 1
#: judged it by batch residuals, which can miss a slow divergence).
EIGENPRO_REVISION = 2


def may_run_eigenpro(method: str, data: DataSpec, solver: SolverSpec) -> bool:
    """Whether a kernel cell's computation may solve a system of ``solver.exact_max_n`` or more
    examples (the regressors' rule: EigenPro from there on), by its method's ``largest_solve``
    bound on ``data`` (``n`` for a fit on all the data; about 1.5 n / K for a per-cluster fit on
    balanced clusters)."""
    largest = method_of(method).largest_solve
    return largest is not None and largest(data) >= solver.exact_max_n


def with_solver(spec: Any, method: str, data: DataSpec) -> Any:
    """A kernel or gated cell's spec naming the EigenPro revision when it may run EigenPro."""
    if isinstance(spec, KernelSpec) and may_run_eigenpro(method, data, spec.solver):
        return dataclasses.replace(spec, solver=dataclasses.replace(spec.solver, eigenpro_revision=EIGENPRO_REVISION))
    if isinstance(spec, GatedSpec):
        return dataclasses.replace(spec, local=with_solver(spec.local, method, data))
    return spec


def _restrict(requested: Sequence | None, grid: Sequence, message) -> tuple:
    """``requested`` (all of ``grid`` when ``None``) after checking that it lies in ``grid``."""
    if requested is None:
        return tuple(grid)
    bad = [v for v in requested if v not in grid]
    if bad:
        raise ValueError(message(bad))
    return tuple(requested)
