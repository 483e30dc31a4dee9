"""The command line on a figure's cells: status, run, plot and their errors."""

from __future__ import annotations

import json

import pytest
from monosem.__main__ import main
from monosem.experiments.cache import ResultCache
from monosem.experiments.sweeps import sweep
from monosem.tables import count


def test_cli_status_run_and_errors(tmp_path, capsys):
    args = ["--profile", "smoke", "--cache", str(tmp_path), "--methods", "bayes"]
    assert main(["status", "fig2", *args]) == 0
    out = capsys.readouterr().out
    assert "0 of 4 cells cached, 4 missing" in out and "bayes              0 cached    4 missing" in out
    assert "missing: bayes" not in out  # a summary per method; --missing lists the cells
    assert main(["run", "fig2", *args, "--K", "10"]) == 0
    capsys.readouterr()
    assert main(["status", "fig2", *args, "--missing"]) == 0
    out = capsys.readouterr().out
    assert "2 of 4 cells cached, 2 missing" in out and "missing: bayes K=1 n=500 run=0" in out
    assert "missing cells: no estimate of their time" in out  # no other run of those cells measured
    with pytest.raises(SystemExit):
        main(["status", "fig2", "--profile", "smoke", "--K", "3"])
    assert "not in the fig2 grid" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "fig9"])


def test_status_tells_damaged_cells_apart(tmp_path, capsys):
    args = ["--profile", "smoke", "--cache", str(tmp_path), "--methods", "bayes", "--K", "10"]
    assert main(["run", "fig2", *args]) == 0
    job = sweep("fig2", "smoke", Ks=[10], methods=["bayes"])[0]
    ResultCache(tmp_path).path(job).write_text("")
    capsys.readouterr()
    with pytest.warns(RuntimeWarning, match="damaged"):
        assert main(["status", "fig2", *args]) == 0
    assert "1 of 2 cells cached, 1 missing (1 of them damaged" in capsys.readouterr().out


def test_plot_of_an_empty_or_partial_cache(tmp_path, capsys):
    from monosem.experiments.figures import plot_figure

    with pytest.raises(ValueError, match="no results of fig2 at profile 'smoke'"):
        plot_figure("fig2", "smoke", cache=ResultCache(tmp_path))
    with pytest.raises(SystemExit):
        main(["plot", "fig2", "--profile", "smoke", "--cache", str(tmp_path)])
    assert "no results of fig2" in capsys.readouterr().err
    # a partial cache (one K, one method) draws the panels it has
    assert main(["run", "fig2", "--profile", "smoke", "--cache", str(tmp_path), "--methods", "bayes", "--K", "10"]) == 0
    fig = plot_figure("fig2", "smoke", cache=ResultCache(tmp_path))
    assert len(fig.axes) == 1 and fig.axes[0].get_title() == "K = 10"


def test_status_counts_the_source_networks_a_gated_cell_must_train(tmp_path, capsys):
    from monosem.experiments.families.gated import source_job
    from monosem.experiments.methods import networks_to_retrain

    cache = ResultCache(tmp_path)
    gated = sweep("fig4", "smoke", Ks=[2], methods=["gated-laplace", "gated-rfm"], runs=[0])
    sources = list(dict.fromkeys(source_job(j) for j in gated))
    assert networks_to_retrain(gated, cache) == sources  # one network serves both gated cells of a (K, n, run)
    assert networks_to_retrain(gated + sources, cache) == []  # already listed as missing: not counted twice
    # a restored record without its weights: the cell is cached, its network still to be trained
    cache.save(sources[0], {"test_mse": 1.0}, 60.0, device="cpu")
    assert networks_to_retrain(gated, cache) == sources
    assert main(["status", "fig4", "--profile", "smoke", "--cache", str(tmp_path), "--methods", "gated-laplace", "gated-rfm", "--K", "2", "--runs", "0"]) == 0
    assert f"{count(len(sources), 'source network')} of the missing gated cells to train first" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["status", "export", "plot", "run"])
@pytest.mark.parametrize("how", ["undecodable bytes", "test_mse a string", "test_mse null", "test_mse a list", "test_mse negative"])
def test_a_damaged_cell_costs_that_cell_in_every_command(tmp_path, capsys, command, how):
    """status, export, plot and run all name a damaged cell file, move it aside and go on with
    the other cells; run recomputes that one cell."""
    from test_cache import DAMAGE, damage

    args = ["--profile", "smoke", "--cache", str(tmp_path / "c"), "--methods", "bayes", "--K", "10"]
    assert main(["run", "fig2", *args]) == 0
    cache = ResultCache(tmp_path / "c")
    hurt, kept = sweep("fig2", "smoke", Ks=[10], methods=["bayes"])
    clean = cache.load(hurt)["metrics"]
    damage(cache, hurt, DAMAGE[how])
    capsys.readouterr()
    extra = {"export": ["--format", "json"], "plot": ["--out", str(tmp_path / "f.png")]}.get(command, [])
    with pytest.warns(RuntimeWarning, match=f"{cache.path(hurt).name} is damaged") as caught:
        assert main([command, "fig2", *args, *extra]) == 0
    said = " ".join(str(w.message) for w in caught)
    out = capsys.readouterr().out
    if command == "status":
        assert "1 of 2 cells cached, 1 missing (1 of them damaged" in out
    elif command == "export":
        assert [row["key"] for row in json.loads(out)] == [kept.key()]
    elif command == "run":
        assert cache.load(hurt)["metrics"] == clean  # that one cell recomputed
    assert "and recomputed" not in said  # the warning says what becomes of the cell, not more
    assert cache.path(hurt).with_name(cache.path(hurt).name + ".corrupt").exists()


def test_run_shows_no_empty_progress_bar(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    args = ["run", "fig2", "--profile", "smoke", "--cache", str(tmp_path), "--methods", "bayes", "--K", "10"]
    assert main(args) == 0  # no network cell: the networks' phase has nothing to show
    err = capsys.readouterr().err
    assert "fig2: 0job" not in err and "2/2" in err
    assert main(args) == 0  # all cached: no bar at all
    assert "fig2:" not in capsys.readouterr().err
