"""A new method or a new page is one new module under ``monosem/experiments/questions/``: the
module registers what it adds, and ``status``, ``run``, ``export`` and ``plot`` take it from there
with nothing else edited. Each test writes its module into a folder that the questions package
reads (as a file in ``questions/`` would be) and runs the command line at the smoke profile."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from monosem.__main__ import main
from monosem.experiments import questions, registry, sweeps
from monosem.experiments.sweeps import figure_of, sweep

#: a method on Figure 2's grid: the training mean, shrunk toward 0, whose spec's default is its value
NEW_METHOD = '''
    """Figure 2 with one more method: the training mean shrunk toward 0."""

    from dataclasses import dataclass

    import numpy as np

    from monosem.experiments.methods import dataset, mse
    from monosem.experiments.registry import register_method
    from monosem.experiments.sweeps import extend_figure

    SHRUNK_MEAN = "shrunk-mean"


    @dataclass(frozen=True)
    class ShrunkMeanSpec:
        shrink: float = 0.5


    def compute(job, cache=None):
        _, (_, y, _), (_, yt, _) = dataset(job)
        return {"test_mse": mse(np.full(len(yt), job.spec.shrink * float(y.mean())), yt)}


    register_method(SHRUNK_MEAN, params=lambda P, grid: ShrunkMeanSpec(), compute=compute,
                    style=dict(color="tab:olive", marker="*", label="shrunk training mean"))
    extend_figure("fig2", SHRUNK_MEAN)
'''

#: a new page's figure: its own grid, its own method beside a built-in one, and its cost
NEW_PAGE = '''
    """A new page: the nearest cluster mean against the Bayes predictor, on a grid of its own."""

    from dataclasses import dataclass

    import numpy as np

    from monosem.experiments.families.bayes import BAYES
    from monosem.experiments.methods import dataset, metrics
    from monosem.experiments.registry import register_cost, register_method
    from monosem.experiments.sweeps import Figure, register_figure

    CLUSTER_MEAN = "cluster-mean"


    @dataclass(frozen=True)
    class Grid:
        Ks: tuple = (2, 5)
        ns: tuple = (100, 200)
        runs: int = 1
        n_test: int = 200


    @dataclass(frozen=True)
    class ClusterMeanSpec:
        pass


    def compute(job, cache=None):
        # every test point predicted by the mean label of its true cluster
        _, (_, y, c), (_, yt, ct) = dataset(job)
        y, c, ct = np.asarray(y, dtype=float), np.asarray(c), np.asarray(ct)
        means = np.array([y[c == k].mean() if (c == k).any() else 0.0 for k in range(job.K)])
        return metrics(means[ct], yt)


    register_method(CLUSTER_MEAN, params=lambda P, grid: ClusterMeanSpec(), compute=compute,
                    style=dict(color="tab:cyan", marker="d", label="cluster mean"))
    register_figure(Figure("toy-page", "A new page: the cluster mean against the Bayes predictor", (CLUSTER_MEAN, BAYES),
                           lambda P: Grid()))
    register_cost("99_toy_page", lambda P, device: {"nothing heavy": 1.0})
'''


@pytest.fixture()
def new_question(tmp_path, monkeypatch):
    """``write(name, source)``: a module of the questions package, found by the registry's
    discovery; the registries are restored afterwards."""
    folder = tmp_path / "questions"
    folder.mkdir()
    registry.discover()  # every built-in registration made, then copied: the copies are restored
    for module, name in ((registry, "METHODS"), (registry, "COSTS"), (sweeps, "FIGURES"), (sweeps, "EXTENSIONS")):
        monkeypatch.setattr(module, name, dict(getattr(module, name)))
    monkeypatch.setattr(questions, "__path__", [*questions.__path__, str(folder)])
    written = []

    def write(name: str, source: str) -> None:
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
        written.append(f"{questions.__name__}.{name}")
        registry.discover.cache_clear()  # a new module: look again

    yield write
    for name in written:
        sys.modules.pop(name, None)
    registry.discover.cache_clear()


def _commands(figure: str, cache, capsys, *select: str) -> str:
    """status, run, export and plot of ``figure`` at the smoke profile; the export's JSON text."""
    where = ["--profile", "smoke", "--cache", str(cache), *select]
    assert main(["status", figure, *where]) == 0
    assert main(["run", figure, *where, "--jobs", "1"]) == 0
    capsys.readouterr()
    assert main(["export", figure, *where, "--format", "json"]) == 0
    exported = capsys.readouterr().out
    assert main(["plot", figure, *where, "--out", str(cache / f"{figure}.png")]) == 0
    assert (cache / f"{figure}.png").stat().st_size > 0
    return exported


def test_a_new_method_on_figure_2_is_one_module(new_question, tmp_path, capsys):
    before = {j.key() for j in sweep("fig2", "smoke")}
    new_question("shrunk_mean", NEW_METHOD)
    assert figure_of("fig2").methods[-1] == "shrunk-mean"
    jobs = sweep("fig2", "smoke")
    assert {j.key() for j in jobs if j.method != "shrunk-mean"} == before  # Figure 2's own cells unchanged
    mine = [j for j in jobs if j.method == "shrunk-mean"]
    assert mine and all(j.spec.shrink == 0.5 for j in mine)
    rows = json.loads(_commands("fig2", tmp_path / "cache", capsys, "--methods", "shrunk-mean", "--K", "10"))
    assert len(rows) == len([j for j in mine if j.K == 10]) and all(r["method"] == "shrunk-mean" and r["test_mse"] > 0 for r in rows)


def test_a_new_page_is_one_module(new_question, tmp_path, capsys):
    from monosem.experiments.estimate import page_seconds, pages

    new_question("toy_page", NEW_PAGE)
    jobs = sweep("toy-page", "smoke")
    assert {j.method for j in jobs} == {"cluster-mean", "bayes"} and len(jobs) == 2 * 2 * 2
    rows = json.loads(_commands("toy-page", tmp_path / "cache", capsys))
    assert len(rows) == len(jobs) and {r["method"] for r in rows} == {"cluster-mean", "bayes"}
    # the Bayes predictor is the floor of every cell
    best = {(r["K"], r["n"]): r["test_mse"] for r in rows if r["method"] == "bayes"}
    assert all(r["test_mse"] >= best[(r["K"], r["n"])] for r in rows)
    assert "99_toy_page" in pages() and page_seconds("99_toy_page", "smoke", "t4") == {"nothing heavy": 1.0}
