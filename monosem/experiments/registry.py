"""What a module adds to the sweeps: methods, declared where they are defined.

A method is its name, its settings (the frozen dataclass a cell's key holds, its ``spec``, made
from a profile by ``params``) and how one cell is computed (``compute``). Every method is
registered the same way, with :func:`register_method`: the built-in families (networks, kernels,
gated predictors, mixtures of experts, the Bayes predictor) from their modules under
:mod:`monosem.experiments.families`, a question's own from its module under
:mod:`monosem.experiments.questions`. Figures are declared beside them
(:func:`.sweeps.register_figure`); :func:`discover` imports those modules, so a new method or a new
page is one new module and nothing else is edited.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["Method", "METHODS", "PLOTS", "ROWS", "COSTS", "register_method", "method_of", "register_plot", "register_rows",
           "register_cost", "discover", "PACKAGES"]


@dataclass(frozen=True)
class Method:
    """A registered method: its name, the settings of its key, its computation, and what the
    machinery needs to schedule and draw it."""

    name: str
    # (Profile, SampleEfficiencySizes, **options) -> the cells' spec (a frozen dataclass, or None for
    # a method that reads only the data); None for a method whose figure builds its own jobs
    # (:attr:`~.sweeps.Figure.jobs`)
    params: Callable[..., Any] | None
    compute: Callable[[Any, Any], dict[str, Any]]  # (Job, ResultCache | None) -> metrics
    #: ([Job], ResultCache | None) -> [metrics]: cells of one spec and data model trained together
    #: as one stack (networks); ``None``: every cell is computed on its own by ``compute``
    train_many: Callable[[list, Any], list[dict[str, Any]]] | None = None
    #: Job -> the network cells whose trained weights this cell reads (computed before it)
    sources: Callable[[Any], list] | None = None
    #: DataSpec -> the number of examples of the largest kernel system a cell solves (which
    #: decides whether its key names the EigenPro revision); ``None``: the method solves none
    largest_solve: Callable[[Any], int] | None = None
    #: its line in a figure of test MSE against n (matplotlib keywords, ``label`` among them)
    style: Mapping[str, Any] = field(default_factory=dict, compare=False)
    #: whether its records hold RFM's iterations 0-3 (``test_mse_by_iteration``)
    by_iteration: bool = False

    @property
    def label(self) -> str:
        """The method's name in a legend."""
        return str(self.style.get("label", self.name))


#: the registered methods, by name
METHODS: dict[str, Method] = {}


def register_method(name: str, *, compute: Callable, params: Callable | None = None, train_many: Callable | None = None,
                    sources: Callable | None = None, largest_solve: Callable | None = None,
                    style: Mapping[str, Any] | None = None, by_iteration: bool = False) -> Method:
    """Declare a method ``name``: ``compute(job, cache)`` gives its metrics (a JSON-ready dict with
    ``test_mse``); ``params(P, sizes, **options)`` every setting its result depends on beyond the
    data, as a frozen dataclass (the job's ``spec``, part of the cache key; the data's K, n, run
    and n_test are the sweep's), or ``None`` when the method's figure builds its own jobs
    (:attr:`~.sweeps.Figure.jobs`). The other keywords are :class:`Method`'s. Registering a name
    twice with other functions is an error (a module imported twice registers the same ones)."""
    if not isinstance(name, str) or not name or " " in name:
        raise ValueError(f"a method name is a non-empty word, got {name!r}")
    method = Method(name, params, compute, train_many, sources, largest_solve, dict(style or {}), by_iteration)
    old = METHODS.get(name)
    if old is not None and _identity(old) != _identity(method):
        raise ValueError(f"method {name!r} is registered already (by {old.compute.__module__})")
    METHODS[name] = method
    return method


def _identity(method: Method) -> tuple:
    """What makes two registrations of a name the same: where their functions are defined."""
    return tuple(getattr(f, "__qualname__", None) for f in (method.params, method.compute, method.train_many, method.sources))


def method_of(name: str) -> Method:
    """The registered method ``name``, looking into every method module when it is not known yet."""
    if name not in METHODS:
        discover()
    if name not in METHODS:
        raise ValueError(f"method={name!r} is not known; known: {sorted(METHODS)}")
    return METHODS[name]


#: figures drawn by a question module's own plot instead of the generic curves, by figure name:
#: ``plot(profile, records, source, cache=None) -> Figure`` (``cache``: where the records were
#: read, for a plot that reads more of a cell, e.g. its saved network)
PLOTS: dict[str, Callable] = {}


def register_plot(figure: str, plot: Callable) -> Callable:
    """Draw ``figure`` with ``plot(profile, records, source, cache=None)`` (a question module's own panels)
    instead of :func:`~monosem.experiments.figures.plot_figure`'s curves of mean over runs."""
    PLOTS[figure] = plot
    return plot


#: figures whose exported rows a question module writes, by figure name: ``rows(records) -> [row]``
#: (one dict per cell of ``{job: record}``, its columns the question's own)
ROWS: dict[str, Callable] = {}


def register_rows(figure: str, rows: Callable) -> Callable:
    """Export ``figure``'s cells with ``rows(records)`` (a question module's own columns) instead of
    :func:`~monosem.experiments.export.export_rows`' generic ones."""
    ROWS[figure] = rows
    return rows


#: the cost models of each page's heavy work, by page (its notebook's stem): one per question the
#: page asks, ``(question's number, cost)`` in the page's order, ``cost(profile, device) ->
#: {part: seconds}`` (:mod:`.estimate`)
COSTS: dict[str, tuple[tuple[int, Callable], ...]] = {}


def register_cost(page: str, cost: Callable, question: int = 0) -> Callable:
    """Count ``cost(profile, device)`` (seconds by part) in ``page``'s heavy work, for
    :func:`~monosem.experiments.estimate.page_seconds`: a page's parts are those of its questions,
    listed by the question's number on the page (``question``)."""
    # a module imported twice registers the same function again: counted once
    known = [(q, c) for q, c in COSTS.get(page, ()) if (c.__module__, c.__qualname__) != (cost.__module__, cost.__qualname__)]
    COSTS[page] = tuple(sorted(known + [(question, cost)], key=lambda entry: entry[0]))
    return cost


#: the packages whose modules register methods, figures, plots, rows and costs
PACKAGES = ("monosem.experiments.families", "monosem.experiments.questions")


@functools.cache
def discover() -> None:
    """Import every module of the method families and of the questions (once), so that the
    methods, figures, plots and costs they register are known."""
    # found by name, not imported: the machinery depends on none of them
    for name in PACKAGES:
        package = importlib.import_module(name)
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
