"""What an experiment module adds to the sweeps: methods, declared where they are defined.

A method is the settings its cells' keys hold (``params(P, sizes)``, read from a profile: a frozen
dataclass, the cell's ``spec``) and how one cell is computed (``compute(job, cache)``). The methods of Figures 2, 4 and 6 are built in
(:mod:`.sweeps`, :mod:`.methods`); a new experiment registers its own with
:func:`register_method` and its figure with :func:`.sweeps.register_figure`, in one new module
of :mod:`monosem.experiments`, and :func:`discover` finds it: nothing else is edited.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Method", "METHODS", "PLOTS", "ROWS", "register_method", "register_plot", "register_rows", "discover"]


@dataclass(frozen=True)
class Method:
    """A registered method: its name, the settings of its key and its computation."""

    name: str
    # (Profile, SampleEfficiencySizes) -> the cells' spec (a frozen dataclass); None for a method
    # whose figure builds its own jobs (:attr:`~.sweeps.Figure.jobs`)
    params: Callable[[Any, Any], Any] | None
    compute: Callable[[Any, Any], dict[str, Any]]  # (Job, ResultCache | None) -> metrics


#: the registered methods, by name
METHODS: dict[str, Method] = {}


def register_method(name: str, *, compute: Callable, params: Callable | None = None) -> Method:
    """Declare a method ``name``: ``compute(job, cache)`` gives its metrics (a JSON-ready dict with
    ``test_mse``); ``params(P, sizes)`` every setting its result depends on beyond the data, as a
    frozen dataclass (the job's ``spec``, part of the cache key; the data's K, n, run and n_test
    are the sweep's), or ``None`` when the method's figure builds its own jobs
    (:attr:`~.sweeps.Figure.jobs`). Registering a name twice with other functions is an error (a
    module imported twice registers the same functions)."""
    if not isinstance(name, str) or not name or " " in name:
        raise ValueError(f"a method name is a non-empty word, got {name!r}")
    method = Method(name, params, compute)
    old = METHODS.get(name)
    if old is not None and (getattr(old.params, "__qualname__", None), old.compute.__qualname__) != (
            getattr(params, "__qualname__", None), compute.__qualname__):
        raise ValueError(f"method {name!r} is registered already (by {old.compute.__module__})")
    METHODS[name] = method
    return method


#: figures drawn by a question module's own plot instead of the generic curves, by figure name:
#: ``plot(profile, records, source) -> Figure``
PLOTS: dict[str, Callable] = {}


def register_plot(figure: str, plot: Callable) -> Callable:
    """Draw ``figure`` with ``plot(profile, records, source)`` (a question module's own panels)
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


@functools.cache
def discover() -> None:
    """Import every module of :mod:`monosem.experiments` and of its questions (once), so that the
    methods, figures and plots they register are known (the built-in ones need no discovery)."""
    from .. import experiments

    # the questions are found by name, not imported: the machinery depends on none of them
    for package in (experiments, importlib.import_module(f"{__package__}.questions")):
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
