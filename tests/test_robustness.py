"""Bad input gets a clear error; a killed run leaves no workers behind; the CLI fails in one line."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import torch

from monosem.__main__ import main
from monosem.gating import MLPGatedRegressor
from monosem.kernels import LaplaceKernelRegressor
from monosem.models import MLP, MLPStack
from monosem.train import TrainConfig, TrainData, train


@pytest.fixture(scope="module")
def gated():
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(60, 5, generator=gen, dtype=torch.float64)
    y = X[:, 0] ** 2
    mlp = MLP(5, 16, "relu", seed=0, dtype=torch.float64)
    with torch.no_grad():
        mlp.a.normal_(generator=gen)
    return mlp, X, y


def test_gated_regressor_checks_its_input(gated):
    mlp, X, y = gated
    with pytest.raises(ValueError, match="not fitted"):
        MLPGatedRegressor(mlp, n_gates=2).predict(X)
    with pytest.raises(ValueError, match=r"y \(n,\)"):
        MLPGatedRegressor(mlp, n_gates=2).fit(X, torch.zeros(30, 2, dtype=torch.float64))
    bad = X.clone()
    bad[3, 1] = float("nan")
    with pytest.raises(ValueError, match="X holds NaN"):
        MLPGatedRegressor(mlp, n_gates=2).fit(bad, y)
    est = MLPGatedRegressor(mlp, n_gates=2).fit(X, y)
    with pytest.raises(ValueError, match=r"gates must lie in \[0, 1\]"):
        est.predict(X, gates=np.full(60, 5))
    with pytest.raises(ValueError, match="gates must be 60 integers"):
        est.predict(X, gates=np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match=r"X must be \(n, 5\)"):
        est.predict(X[:, :3])


def test_exact_max_n_must_be_positive():
    with pytest.raises(ValueError, match="exact_max_n=0"):
        LaplaceKernelRegressor(exact_max_n=0).fit(np.zeros((4, 2)), np.zeros(4))


def test_nan_training_data_is_an_error_naming_the_tensor():
    x = torch.randn(64, 4)
    y = torch.randn(64)
    y[7] = float("nan")
    with pytest.raises(ValueError, match="y_train holds NaN"):
        train(MLPStack(4, 8, "relu", [0]), TrainData(x, y), TrainConfig(max_steps=2, batch=16, lr=1e-3), progress=False)


def test_cli_os_error_is_one_line(tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main(["run", "fig2", "--profile", "smoke", "--cache", str(cache), "--methods", "bayes", "--K", "10"]) == 0
    capsys.readouterr()
    rc = main(["plot", "fig2", "--profile", "smoke", "--cache", str(cache), "--out", str(tmp_path / "no" / "such" / "dir.png")])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1 and "dir.png" in err and "Traceback" not in err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killed_run_leaves_no_pool_workers(tmp_path):
    script = textwrap.dedent(f"""
        import time
        from monosem.experiments.cache import Job, ResultCache
        from monosem.experiments.specs import DataSpec
        from monosem.experiments.runner import run_jobs

        def slow(job, cache=None):
            time.sleep(60)
            return {{"x": 1}}

        if __name__ == "__main__":
            jobs = [Job("toy", DataSpec(1, 10, r, 8)) for r in range(2)]
            run_jobs(jobs, slow, ResultCache({str(tmp_path)!r}), executor="process", n_jobs=2, progress=False)
    """)
    path = tmp_path / "run.py"
    path.write_text(script)
    parent = subprocess.Popen([sys.executable, str(path)], cwd=tmp_path)

    def children() -> list[int]:
        out = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open(f"/proc/{pid}/stat") as fh:
                        fields = fh.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[1]) == parent.pid:
                    out.append(int(pid))
        return out

    deadline = time.time() + 60
    while len(children()) < 2 and time.time() < deadline:
        time.sleep(0.2)
    workers = children()
    assert len(workers) >= 2, "the pool did not start"
    time.sleep(1.0)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.time() + 10
    alive = workers
    while alive and time.time() < deadline:
        time.sleep(0.2)
        alive = [w for w in workers if os.path.exists(f"/proc/{w}") and open(f"/proc/{w}/stat").read().split()[2] != "Z"]
    for w in alive:  # clean up before failing
        os.kill(w, signal.SIGKILL)
    assert not alive, f"workers {alive} outlived their parent"


def test_a_model_file_of_another_job_is_refused(tmp_path):
    from monosem.experiments.cache import ResultCache
    from monosem.experiments.families.networks import load_mlp
    from monosem.experiments.methods import _model_path
    from monosem.experiments.sweeps import sweep

    cache = ResultCache(tmp_path)
    a, b = sweep("fig2", "smoke", Ks=[1, 10], ns=[500], methods=["mlp-relu"])
    net = MLP(20, a.spec.width, "relu", seed=1000)
    path_a, path_b = _model_path(cache, a), _model_path(cache, b)
    path_a.parent.mkdir(parents=True)
    torch.save({"key": a.key()} | {k: getattr(net, k).detach() for k in ("W", "b", "a", "a0")}, path_a)
    assert load_mlp(a, cache).width == net.width
    os.replace(path_a, path_b)  # K = 1's network where K = 10's belongs
    with pytest.warns(RuntimeWarning, match="holds the network of job"), pytest.raises(FileNotFoundError):
        load_mlp(b, cache)
    assert path_b.with_name(path_b.name + ".corrupt").exists()


def test_files_are_created_with_the_umask_mode(tmp_path):
    from monosem.atomic import atomic_write_json

    old = os.umask(0o022)
    try:
        atomic_write_json(tmp_path / "r.json", {"x": 1})
    finally:
        os.umask(old)
    assert (os.stat(tmp_path / "r.json").st_mode & 0o777) == 0o644


def test_cli_plot_of_a_partial_cache_says_what_is_missing(tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main(["run", "fig2", "--profile", "smoke", "--cache", str(cache), "--methods", "bayes", "--K", "10"]) == 0
    capsys.readouterr()
    assert main(["plot", "fig2", "--profile", "smoke", "--cache", str(cache), "--out", str(tmp_path / "f.png")]) == 0
    assert "26 of 28 cells are not computed yet" in capsys.readouterr().out


def test_jobs_sets_the_slurm_array_parallelism(tmp_path, monkeypatch):
    from monosem.experiments import figures

    import shutil

    pytest.importorskip("submitit")
    seen = {}
    monkeypatch.setattr(shutil, "which", lambda tool: f"/usr/bin/{tool}")  # as on a cluster
    monkeypatch.setattr(figures, "run_figure", lambda *a, **kw: seen.update(kw["slurm"]))
    assert main(["run", "fig2", "--profile", "smoke", "--cache", str(tmp_path), "--executor", "slurm", "--jobs", "7"]) == 0
    assert seen["slurm_array_parallelism"] == 7


def test_interrupt_ends_the_cli_with_one_line(monkeypatch, capsys):
    import monosem.__main__ as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_dispatch", interrupted)
    assert cli.main(["status", "fig2", "--profile", "smoke"]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "interrupted" in err and "resume" in err and "Traceback" not in err
