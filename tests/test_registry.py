"""A new Figure-2-like experiment is one module: it registers its method and its figure, and the
sweep, the runner, the cache and the command line take it from there."""

from dataclasses import dataclass

import numpy as np
import pytest

from monosem.__main__ import main
from monosem.experiments import registry
from monosem.experiments.methods import dataset, mse
from monosem.experiments.sweeps import FIGURES, Figure, figure_of, register_figure, sweep


@dataclass(frozen=True)
class Shrink:
    shrink: float


def _params(P, sizes) -> Shrink:
    return Shrink(0.5)


def _compute(job, cache=None) -> dict:
    # predict the training mean, shrunk toward 0: a method no built-in module knows
    _, (_, y, _), (_, yt, _) = dataset(job)
    return {"test_mse": mse(np.full(len(yt), job.spec.shrink * float(y.mean())), yt)}


@pytest.fixture()
def toy():
    registry.register_method("mean-test", params=_params, compute=_compute)
    fig = register_figure(Figure("toy-test", "A toy: the training mean against the Laplace oracle", ("mean-test", "oracle-laplace"),
                                 "sample_efficiency"))
    yield fig
    FIGURES.pop("toy-test")
    registry.METHODS.pop("mean-test")


def test_a_registered_figure_runs_from_the_command_line(toy, tmp_path, capsys):
    jobs = sweep("toy-test", "smoke")
    assert {j.method for j in jobs} == {"mean-test", "oracle-laplace"}
    assert all(j.spec.shrink == 0.5 for j in jobs if j.method == "mean-test")
    assert main(["run", "toy-test", "--profile", "smoke", "--cache", str(tmp_path)]) == 0
    assert main(["status", "toy-test", "--profile", "smoke", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"{len(jobs)} of {len(jobs)} cells cached" in out and "mean-test" in out
    assert main(["export", "toy-test", "--profile", "smoke", "--cache", str(tmp_path), "--format", "json"]) == 0


def test_registration_is_checked():
    assert figure_of("fig2") is FIGURES["fig2"]
    with pytest.raises(ValueError, match="not a known figure"):
        figure_of("no-such-figure")
    with pytest.raises(ValueError, match="non-empty word"):
        registry.register_method("two words", params=_params, compute=_compute)
    registry.register_method("mean-test-2", params=_params, compute=_compute)
    try:
        with pytest.raises(ValueError, match="registered already"):
            registry.register_method("mean-test-2", params=_params, compute=mse)
    finally:
        registry.METHODS.pop("mean-test-2")
    with pytest.raises(ValueError, match="declared already"):
        register_figure(Figure("fig2", "another", ("bayes",), "sample_efficiency"))


def test_the_machinery_names_no_method_figure_or_page():
    """Methods, figures and page costs are registered by their own modules: the machinery that
    sweeps, computes, estimates and draws them spells none of their names."""
    import inspect

    from monosem.experiments import estimate, figures, methods, sweeps as sweeps_module

    registry.discover()
    names = {"method": set(registry.METHODS), "figure": set(FIGURES), "page": set(registry.COSTS)}
    # the cost model times kernel fits by their algorithm ("rfm", "laplace"), not by method
    for module, kinds in ((sweeps_module, names), (methods, names), (figures, names),
                          (estimate, {"figure": names["figure"], "page": names["page"]})):
        source = inspect.getsource(module)
        for kind, spelled in kinds.items():
            found = sorted(name for name in spelled if f'"{name}"' in source or f"'{name}'" in source)
            assert not found, f"{module.__name__} names the {kind}s {found}"
