"""The sweep machinery: cache keys, atomic results, resume after interruption, executors, CLI."""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pytest

from monosem.__main__ import main
from monosem.experiments import cache as cache_mod
from monosem.experiments.cache import Job, ResultCache, atomic_write_json
from monosem.experiments.results import aggregate
from monosem.experiments.runner import run_jobs
from monosem.experiments.sweeps import FIGURES, sweep


def toy_compute(job: Job, cache=None) -> dict:
    """A deterministic stand-in for a real method (module level, so it pickles)."""
    return {"test_mse": 1.0 / (job.n * job.K) + 1e-3 * job.run, "method": job.method}


def _jobs() -> list[Job]:
    return [Job.make("toy", K, n, r, "smoke", width=8, lr=0.01) for K in (1, 2) for n in (10, 20) for r in (0, 1)]


def test_keys_are_stable_and_order_independent():
    a = Job.make("mlp-relu", 10, 1000, 0, "cpu", width=64, lr=0.01, nested={"x": 1, "y": [1, 2]})
    b = Job.make("mlp-relu", 10, 1000, 0, "cpu", lr=0.01, nested={"y": [1, 2], "x": 1}, width=64)
    assert a == b and a.key() == b.key() and len(a.key()) == 16
    # a fixed configuration has a fixed key across Python processes (no hash randomization)
    assert Job.make("bayes", 1, 10, 0, "smoke", n_test=5).key() == Job.make("bayes", 1, 10, 0, "smoke", n_test=5).key()


def test_keys_are_sensitive_to_every_field():
    base = Job.make("mlp-relu", 10, 1000, 0, "cpu", width=64, lr=0.01)
    variants = [
        dataclasses.replace(base, method="mlp-gelu"),
        dataclasses.replace(base, K=2),
        dataclasses.replace(base, n=2000),
        dataclasses.replace(base, run=1),
        Job.make("mlp-relu", 10, 1000, 0, "cpu", width=65, lr=0.01),
        Job.make("mlp-relu", 10, 1000, 0, "cpu", width=64, lr=0.02),
        Job.make("mlp-relu", 10, 1000, 0, "cpu", width=64, lr=0.01, extra=True),
    ]
    keys = {base.key()} | {v.key() for v in variants}
    assert len(keys) == len(variants) + 1
    # the declaring profile is a label, not an input of the computation: one cell, one key
    assert dataclasses.replace(base, profile="long").key() == base.key()


def test_profiles_share_cells_that_compute_the_same_thing():
    from monosem.experiments.sweeps import sweep

    fig2 = {j.key(): j for j in sweep("fig2", "long")}
    regime = {j.key(): j for j in sweep("regime", "long")}
    shared = set(fig2) & set(regime)
    # K = 10, 50 x n = 20k, 50k x run 0 x (ReLU and ReGLU at width 1 024, RFM, 2 oracles, Bayes)
    assert len(shared) == 2 * 2 * 6
    assert {regime[k].param_dict.get("width") for k in regime} == {256, 1024, None}


def test_a_profiles_cut_removes_exactly_the_cut_cells():
    """The long profile's budget cut (``method_max_n``): global RFM in the regime map up to
    50 000, GELU and SwiGLU in Figure 6 at 20 000 only; every other cell of the grid is declared."""
    from monosem.experiments.sweeps import sweep
    from monosem.profiles import get_profile

    L = get_profile("long")
    regime = sweep("regime", L)
    assert max(j.n for j in regime if j.method == "rfm") == 50_000
    assert max(j.n for j in regime if j.method == "mlp-relu") == 200_000
    per_n = len(L.regime.Ks) * (2 * 2 + 4)  # 2 MLPs x 2 sizes + RFM, 2 oracles, Bayes
    assert len(regime) == 5 * per_n - 2 * len(L.regime.Ks)
    fig6 = sweep("fig6", L)
    assert {j.n for j in fig6 if j.method in ("mlp-gelu", "mlp-swiglu")} == {20_000}
    assert {j.n for j in fig6 if j.method == "mlp-relu"} == {20_000, 50_000}
    assert L.regime.includes("rfm", 50_000) and not L.regime.includes("rfm", 50_001)
    assert L.regime.includes("mlp-relu", 10**9)
    # a profile without a cut declares the whole grid
    cpu = get_profile("cpu").sample_efficiency
    assert len(sweep("fig6", "cpu")) == len(cpu.Ks) * len(cpu.ns) * cpu.runs * 5


def test_cache_version_is_part_of_the_key(monkeypatch):
    job = _jobs()[0]
    k1 = job.key()
    monkeypatch.setattr(cache_mod, "CACHE_VERSION", cache_mod.CACHE_VERSION + 1)
    assert job.key() != k1


def test_atomic_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    atomic_write_json(target, {"a": 1})

    def broken_dump(obj, fh, **kw):
        fh.write('{"half": ')
        raise RuntimeError("disk full")

    monkeypatch.setattr(json, "dump", broken_dump)
    with pytest.raises(RuntimeError):
        atomic_write_json(target, {"a": 2})
    monkeypatch.undo()
    assert json.loads(target.read_text()) == {"a": 1}  # the old complete file, untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # no temporary left behind


class _Boom(Exception):
    pass


def test_interrupted_sweep_resumes_and_matches(tmp_path):
    jobs = _jobs()
    full = run_jobs(jobs, toy_compute, ResultCache(tmp_path / "a"), progress=False)
    calls = []

    def flaky(job, cache=None):
        calls.append(job)
        if len(calls) == 3:
            raise _Boom("killed")
        return toy_compute(job)

    c = ResultCache(tmp_path / "b")
    with pytest.raises(_Boom):
        run_jobs(jobs, flaky, c, progress=False)
    done, missing = c.status(jobs)
    assert len(done) == 2 and len(missing) == len(jobs) - 2
    calls.clear()
    resumed = run_jobs(jobs, toy_compute, c, progress=False)
    assert [r["metrics"] for r in resumed.values()] == [r["metrics"] for r in full.values()]
    # a finished cell is never recomputed
    again = run_jobs(jobs, flaky, c, progress=False)
    assert calls == [] and len(again) == len(jobs)
    # every cell records its wall time and its process CPU time
    assert all(r["timing"]["seconds"] >= 0 and r["timing"]["cpu_seconds"] >= 0 for r in again.values())


def test_cache_refuses_a_file_of_another_job(tmp_path):
    c = ResultCache(tmp_path)
    a, b = _jobs()[:2]
    c.save(a, {"x": 1}, 0.1)
    os.replace(c.path(a), c.path(b))
    with pytest.warns(RuntimeWarning, match="another job"), pytest.raises(FileNotFoundError, match="moved aside"):
        c.load(b)
    # moved aside: the cell now counts as missing and is recomputed
    assert not c.has(b) and c.path(b).with_name(c.path(b).name + ".corrupt").exists()


def test_process_pool_executor(tmp_path):
    jobs = _jobs()[:4]
    rec = run_jobs(jobs, toy_compute, ResultCache(tmp_path), executor="process", n_jobs=2, progress=False)
    assert [r["metrics"] for r in rec.values()] == [toy_compute(j) for j in jobs]


@pytest.mark.slow
def test_submitit_local_executor(tmp_path):
    pytest.importorskip("submitit")
    from monosem.experiments.methods import compute  # importable in the submitted processes

    jobs = sweep("fig2", "smoke", methods=["bayes"])[:2]
    rec = run_jobs(jobs, compute, ResultCache(tmp_path), executor="slurm-local", n_jobs=2, progress=False,
                   slurm={"timeout_min": 5})
    local = run_jobs(jobs, compute, ResultCache(tmp_path / "inproc"), progress=False)
    for job in jobs:
        assert rec[job]["metrics"]["test_mse"] == local[job]["metrics"]["test_mse"]


def test_bad_executor_and_jobs(tmp_path):
    with pytest.raises(ValueError, match="executor"):
        run_jobs(_jobs(), toy_compute, ResultCache(tmp_path), executor="mpi")
    with pytest.raises(ValueError, match="n_jobs"):
        run_jobs(_jobs(), toy_compute, ResultCache(tmp_path), n_jobs=0)


def test_aggregate_mean_and_std(tmp_path):
    rec = run_jobs(_jobs(), toy_compute, ResultCache(tmp_path), progress=False)
    cells = aggregate(rec)
    cell = next(c for c in cells if c.K == 2 and c.n == 10)
    assert cell.runs == 2 and cell.mean == pytest.approx(1 / 20 + 5e-4)
    assert cell.std == pytest.approx((2 * (5e-4) ** 2) ** 0.5)


def test_sweeps_declare_the_papers_grids():
    jobs = sweep("fig2", "paper")
    assert {j.K for j in jobs} == {1, 2, 10, 50} and {j.n for j in jobs} == {20_000, 50_000, 100_000, 200_000}
    assert {j.run for j in jobs} == set(range(5))
    assert {j.method for j in jobs} == set(FIGURES["fig2"].methods)
    relu = next(j for j in jobs if j.method == "mlp-relu")
    p = relu.param_dict
    assert (p["width"], p["batch"], p["lr"], p["lr_final"]) == (4096, 4096, 1e-2, 1e-4)
    assert (p["min_steps"], p["max_steps"], p["eval_every"], p["patience_evals"]) == (20_000, 200_000, 500, 60)
    assert {j.K for j in sweep("fig4", "paper")} == {2, 5, 10, 50}
    # the source MLP of Figure 4 is the ReLU cell of Figure 2: one shared cache entry
    f2 = {j for j in sweep("fig2", "cpu") if j.method == "mlp-relu"}
    f4 = {j for j in sweep("fig4", "cpu") if j.method == "mlp-relu"}
    assert f2 & f4


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(figure="fig9", profile="cpu"), "figure"),
        (dict(figure="fig2", profile="huge"), "profile"),
        (dict(figure="fig2", profile="cpu", Ks=[3]), "K="),
        (dict(figure="fig2", profile="cpu", methods=["svm"]), "methods"),
        (dict(figure="fig2", profile="smoke", runs=[7]), "runs"),
        (dict(figure="fig2", profile="smoke", ns=[123]), "n="),
    ],
)
def test_sweep_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sweep(**kwargs)


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
    with pytest.raises(SystemExit):
        main(["status", "fig2", "--profile", "smoke", "--K", "3"])
    assert "not in the fig2 grid" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "fig9"])


def toy_compute_many(jobs: list[Job], cache=None) -> list[dict]:
    return [toy_compute(j) for j in jobs]


def test_batched_plan_gives_the_same_results(tmp_path):
    jobs = _jobs()
    seen = []

    def plan(missing):
        by_run = {}
        for j in missing:
            by_run.setdefault(j.run, []).append(j)
        seen.extend(len(b) for b in by_run.values())
        return list(by_run.values())

    batched = run_jobs(jobs, toy_compute_many, ResultCache(tmp_path / "b"), plan=plan, progress=False)
    single = run_jobs(jobs, toy_compute, ResultCache(tmp_path / "s"), progress=False)
    assert seen == [4, 4]
    assert [r["metrics"] for r in batched.values()] == [r["metrics"] for r in single.values()]
    pooled = run_jobs(jobs, toy_compute_many, ResultCache(tmp_path / "p"), plan=plan, executor="process", n_jobs=2, progress=False)
    assert [r["metrics"] for r in pooled.values()] == [r["metrics"] for r in single.values()]


def test_paper_cost_estimate_scales_by_the_cost_model():
    from monosem.experiments.estimate import paper_cost_estimate

    jobs = [j for j in sweep("fig2", "cpu") if j.method in ("laplace", "mlp-relu")]
    n_max = max(j.n for j in jobs)
    records = {j: {"timing": {"seconds": 1.0 if j.n == n_max else 99.0}} for j in jobs}
    est = paper_cost_estimate(records, "fig2", "cpu")
    paper_ns = (20_000, 50_000, 100_000, 200_000)
    assert est["laplace"] == pytest.approx(4 * 5 * sum((n / n_max) ** 2 for n in paper_ns))
    from monosem.profiles import get_profile

    se, pse = get_profile("cpu").sample_efficiency, get_profile("paper").sample_efficiency
    ratio = (pse.width * pse.batch * pse.max_steps) / (se.width * se.batch * se.max_steps)
    assert est["mlp-relu"] == pytest.approx(4 * 4 * 5 * ratio)
    assert "bayes" not in est


# ----------------------------------------------------------------- recorded paper-profile results
def test_recorded_results_round_trip(tmp_path):
    import json

    import numpy as np

    from monosem.experiments.recorded import load_recorded, recorded_path, save_recorded

    results = {"C": np.float64(0.93), "counts": np.array([1, 2, 3]), (3, 4.0): {"ok": np.bool_(True)}, "n": np.int64(5)}
    path = save_recorded("demo_page", "paper", results, 12.5, path=tmp_path / "demo_page.json")
    payload = json.loads(path.read_text())
    assert payload["profile"] == "paper" and payload["seconds"] == 12.5
    assert payload["results"] == {"C": 0.93, "counts": [1, 2, 3], "(3, 4.0)": {"ok": True}, "n": 5}
    assert {"cpu_count", "torch_threads", "accelerator", "git_commit"} <= set(payload["machine"])
    assert not list(tmp_path.glob(".*.tmp"))
    assert recorded_path("demo_page").name == "demo_page.json"
    assert load_recorded("no_such_page_recorded") is None
    with pytest.raises(ValueError, match="name"):
        recorded_path("../escape")
    with pytest.raises(ValueError, match="seconds"):
        save_recorded("demo_page", "paper", {}, -1.0, path=tmp_path / "x.json")


def test_dynamics_tables_numbers_and_claims_read_a_page07_payload():
    from monosem.experiments.theorem1_dynamics import dynamics_claims, dynamics_numbers, dynamics_tables, recorded_header

    payload = {
        "profile": "paper", "recorded": "2026-11-30 20:00 UTC", "seconds": 1800.0,
        "machine": {"cpu_count": 2, "torch_threads": 2, "accelerator": None, "git_commit": "abc1234"},
        "results": {
            "t_max": 5e4,
            "flows": [{"K": 3, "R": 4.0, "m": 256, "converged": 1.0, "median_distance_times_R": 0.9198},
                      {"K": 3, "R": 32.0, "m": 256, "converged": 0.0, "median_distance_times_R": None}],
            "C_fit": 0.935, "chi2_p": {"3": 0.2},
            "coverage": {"K": 10, "pool": 270, "rows": [{"m": 10, "simulated": 0.1, "exact": 0.2, "bound": 0.0, "bound_exp": 0.0}]},
            "tracking": {"K": 3, "R": 4.0, "m": 64, "n_mc": 100000, "T": 50.0, "eps": [1e-2, 1e-3], "errors": [1e-3, 1e-5], "slope": 2.0},
            "full_network": {"eps": 3e-4, "loss_start": 0.5, "loss_end": 0.4, "t_half_drop": None, "interaction_rel_se": 0.01,
                             "t_most_specialized": 100.0, "one_cluster_most_specialized": 1.0, "one_cluster_end": 0.5},
            "perturbation": {"h2": {"0": 1.0, "1": 0.1}},
        },
    }
    head = recorded_header(payload)
    assert "30.0 min" in head and "commit abc1234" in head
    tables = dynamics_tables(payload["results"])
    assert tables["flows"].loc[(3, 32.0), "converged share"] == 0.0 and list(tables["tracking"].index) == [1e-2, 1e-3]
    numbers = dynamics_numbers(payload["results"])
    assert numbers["C_fit"] == "0.935" and numbers["conv_hi"] == "0 %" and numbers["slope"] == "2.00"
    lemma9, lemma8, lemma7 = dynamics_claims(payload["results"], "07_theorem1_dynamics", "paper")
    assert lemma9.verdict == "reproduces" and lemma8.verdict == "does not reproduce" and lemma7.verdict == "not settled"


def test_damaged_json_model_and_checkpoint_cost_one_cell_each(tmp_path, monkeypatch):
    """A sweep whose cache holds one garbled result, one garbled network and one garbled
    checkpoint finishes with one warning per file and the numbers of a clean run."""
    import hashlib
    import shutil

    from monosem.experiments.figures import run_figure

    monkeypatch.setenv("MONOSEM_MAX_STACK", "1")
    select = dict(methods=["mlp-relu", "gated-laplace"], executor="inprocess", progress=False)
    clean = ResultCache(tmp_path / "clean")
    ref = run_figure("fig4", "smoke", cache=clean, **select)
    shutil.copytree(clean.root, tmp_path / "hurt")
    hurt = ResultCache(tmp_path / "hurt")
    by = {(j.method, j.K): j for j in ref}
    # 1. a truncated result file
    bad_json = hurt.path(by[("gated-laplace", 2)])
    bad_json.write_text('{"config": {"K"')
    # 2. a garbled trained network (the source of the K = 2 gated cell)
    bad_model = hurt.root / "models" / f"{by[('mlp-relu', 2)].key()}.pt"
    bad_model.write_bytes(b"\x00garbage")
    # 3. a garbled checkpoint of a network that has to be trained again
    relu10 = by[("mlp-relu", 10)]
    hurt.path(relu10).unlink()
    tag = hashlib.sha256(relu10.key().encode()).hexdigest()[:16]
    bad_ckpt = hurt.root / "checkpoints" / f"{tag}.pt"
    bad_ckpt.parent.mkdir(exist_ok=True)
    bad_ckpt.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.warns(RuntimeWarning) as caught:
        got = run_figure("fig4", "smoke", cache=hurt, **select)
    named = " ".join(str(w.message) for w in caught)
    for path in (bad_json, bad_model, bad_ckpt):
        assert str(path) in named and path.with_name(path.name + ".corrupt").exists()
    for job, rec in ref.items():
        assert got[job]["metrics"]["test_mse"] == rec["metrics"]["test_mse"], job.label()


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


def test_dynamics_record_round_trip():
    """Page 07's record (schema in monosem.experiments.theorem1_dynamics) is JSON-ready and its
    summary prints every part."""
    import json

    from monosem.experiments.theorem1_dynamics import dynamics_results, dynamics_tables

    rng = np.random.default_rng(0)
    flows = {(3, 4.0): {"conv": np.array([True, True, False, True]), "dist": np.full(4, 0.1), "labels": np.array([0, 1, 2, 0])}}
    res = dynamics_results(
        t_max=100.0, flows=flows, C_fit=0.93,
        coverage=dict(K=3, pool=np.array([0, 1, 0]), ms=np.arange(1, 7), simulated=np.linspace(0, 1, 6),
                      exact=np.linspace(0, 1, 6), bounds=np.zeros((6, 2))),
        tracking=dict(K=3, R=4.0, m=4, n_mc=10, T=5.0, eps=[1e-2, 1e-3], errors=[1e-3, 1e-5], slope=2.0, invariant=[1e-9, 1e-9]),
        full_network=dict(eps=1e-3, loss=np.array([0.5, 0.35, 0.3]), t=np.array([0.0, 1.0, 2.0]),
                          one_cluster=np.array([0.0, 1.0, 0.5]), interaction_rel_se=0.01),
        perturbation={(2, 0.0): rng.uniform(0.995, 1, 4), (2, 1.0): np.zeros(4), (4, 0.0): np.ones(4), (4, 1.0): np.ones(4)},
    )
    back = json.loads(json.dumps(res))
    assert back["flows"][0]["converged"] == 0.75 and back["full_network"]["t_half_drop"] == 1.0
    assert back["full_network"]["one_cluster_most_specialized"] == 1.0 and back["perturbation"]["h2"] == {"0": 1.0, "1": 0.0}
    tables = dynamics_tables(back)
    assert tables["perturbation"].loc["h2", "1"] == 0.0 and tables["tracking"]["sup tracking error"].tolist() == [1e-3, 1e-5]


def test_export_writes_every_cell_as_csv_and_json(tmp_path, capsys):
    import csv as csv_mod
    import json

    args = ["--profile", "smoke", "--cache", str(tmp_path), "--methods", "bayes", "--K", "10"]
    assert main(["run", "fig2", *args]) == 0
    capsys.readouterr()
    assert main(["export", "fig2", *args, "--format", "csv"]) == 0
    rows = list(csv_mod.DictReader(capsys.readouterr().out.splitlines()))
    assert [(r["method"], r["K"], r["n"]) for r in rows] == [("bayes", "10", "500"), ("bayes", "10", "1000")]
    assert all(float(r["test_mse"]) > 0 and len(r["key"]) == 16 for r in rows)
    out = tmp_path / "fig2.json"
    assert main(["export", "fig2", *args, "--format", "json", "--out", str(out)]) == 0
    assert [r["test_mse"] for r in json.loads(out.read_text())] == [float(r["test_mse"]) for r in rows]


def test_export_of_the_recorded_long_run(capsys):
    assert main(["export", "regime", "--profile", "long", "--recorded", "--format", "json"]) == 0
    import json

    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["method"] for r in rows} <= {"mlp-relu", "mlp-reglu", "rfm", "oracle-laplace", "oracle-rfm", "bayes"}
    assert all(r["stop_reason"] in ("target", "plateau", "cap", "diverged") for r in rows if r["method"].startswith("mlp-"))


def test_the_key_holds_what_the_computation_reads(monkeypatch):
    """Precision, the full A.2 schedule and a gated cell's solver settings are in the key, and
    the computations build their configurations from the key alone."""
    from monosem.experiments import methods

    job32 = sweep("fig2", "smoke", Ks=[10], ns=[500], methods=["mlp-relu"])[0]
    monkeypatch.setenv("MONOSEM_DTYPE", "float64")
    job64 = sweep("fig2", "smoke", Ks=[10], ns=[500], methods=["mlp-relu"])[0]
    monkeypatch.delenv("MONOSEM_DTYPE")
    assert job32.key() != job64.key() and job64.param_dict["dtype"] == "float64"
    p = dict(job32.param_dict, lr_final=1e-5, rel_improvement=1e-3)
    cfg = methods._a2_config(p)
    assert cfg.final_lr_ratio == pytest.approx(1e-5 / p["lr"]) and cfg.min_rel_improvement == 1e-3
    gated = sweep("fig4", "cpu", Ks=[10], ns=[5_000], methods=["gated-rfm"])[0]
    seen = {}

    class Capture(Exception):
        pass

    def fake(mlp, **kw):
        seen.update(kw["local_params"])
        raise Capture

    monkeypatch.setattr(methods, "MLPGatedRegressor", fake)
    monkeypatch.setattr(methods, "load_mlp", lambda job, cache, device=None: None)
    monkeypatch.setattr(methods.ResultCache, "has", lambda self, job: True)
    with pytest.raises(Capture):
        methods.compute_gated(gated, ResultCache("/nonexistent"))
    p = gated.param_dict
    assert seen["agop_samples"] == p["agop_samples"] == 2_000  # the cpu profile's, not RFM's default 20 000
    assert (seen["ridge"], seen["max_iter"], seen["dtype"]) == (p["ridge"], p["solver_max_iter"], p["dtype"])


def test_one_home_for_the_noise_level():
    from monosem.data import LABEL_NOISE_VARIANCE
    from monosem.experiments.figures import NOISE_VARIANCE
    from monosem.kernels.solvers import TARGET_TRAIN_MSE
    from monosem.train import A2_TARGET_MSE, a2_config

    assert LABEL_NOISE_VARIANCE == 4e-4 == TARGET_TRAIN_MSE == A2_TARGET_MSE == NOISE_VARIANCE == a2_config("relu").target_mse


def test_export_writes_every_figure_at_the_smoke_profile(tmp_path, capsys, monkeypatch):
    """Figures 2, 4 and 6 from the cache, Figure 1 and Theorem 2 computed, Theorem 1 from the
    record page 07 leaves in the cache (here: the recorded paper run copied there) or --recorded."""
    import csv as csv_mod
    import json
    import shutil

    from monosem.experiments.export import page_record_path
    from monosem.experiments.recorded import recorded_path
    from monosem.experiments.sweeps import FIGURES

    monkeypatch.setenv("TQDM_DISABLE", "1")
    cache = ["--cache", str(tmp_path)]
    for fig, n in (("fig2", 500), ("fig6", 500), ("fig4", 1000)):
        args = ["--profile", "smoke", *cache, "--K", "10", "--n", str(n)]
        assert main(["run", fig, *args]) == 0
        capsys.readouterr()
        assert main(["export", fig, *args]) == 0
        rows = list(csv_mod.DictReader(capsys.readouterr().out.splitlines()))
        assert {r["method"] for r in rows} == set(FIGURES[fig].methods), fig
    assert main(["export", "fig1", "--profile", "smoke", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["branch"] for r in rows} == {"relu", "gelu", "reglu gate", "reglu value", "swiglu gate", "swiglu value"}
    assert all(0 <= r["frac_A071"] <= 1 and r["test_mse"] > 0 for r in rows)
    assert main(["export", "theorem2", "--profile", "smoke"]) == 0
    rows = list(csv_mod.DictReader(capsys.readouterr().out.splitlines()))
    assert {"mlp_B3K", "laplace"} <= {r["method"] for r in rows} and all(float(r["test_mse"]) >= 0 for r in rows)
    with pytest.raises(SystemExit):  # no page record yet: a clear error
        main(["export", "theorem1", "--profile", "smoke", *cache])
    assert "run page 07" in capsys.readouterr().err
    target = page_record_path(tmp_path, "theorem1_dynamics", "smoke")
    target.parent.mkdir(parents=True)
    shutil.copy(recorded_path("theorem1_dynamics_paper"), target)
    assert main(["export", "theorem1", "--profile", "smoke", *cache]) == 0
    rows = list(csv_mod.DictReader(capsys.readouterr().out.splitlines()))
    assert {r["section"] for r in rows} == {"flows", "coverage", "tracking", "full_network", "perturbation"}
    assert main(["export", "theorem1", "--profile", "paper", "--recorded", "--format", "json"]) == 0
    recorded = json.loads(capsys.readouterr().out)
    assert len(recorded) == len(rows) and recorded[0]["profile"] == "paper"


def test_eigenpro_solves_are_listed_from_the_cells_that_ran_it():
    import pandas as pd

    from monosem.experiments.sample_efficiency import eigenpro_solves, eigenpro_solves_frame

    ep = {"solver": "eigenpro", "iterations": 129, "train_mse": 3.96e-4, "converged": True, "step_halvings": 4}
    exact = {"solver": "exact", "iterations": 1, "train_mse": 1e-9, "converged": True, "step_halvings": 0}
    records = {
        Job.make("laplace", 2, 20_000, 0, "long"): {"metrics": {"solve": ep}},
        Job.make("rfm", 2, 20_000, 0, "long"): {"metrics": {"solves": [ep, dict(ep, converged=False)]}},
        Job.make("laplace", 2, 5_000, 0, "long"): {"metrics": {"solve": exact}},
        Job.make("mlp-relu", 2, 20_000, 0, "long"): {"metrics": {"test_mse": 1.0}},
        # per-cluster fits: an oracle's Laplace solves, a gated RFM's iterations (gate 1 empty)
        Job.make("oracle-laplace", 2, 20_000, 0, "long"): {"metrics": {"local_solves": [exact, ep]}},
        Job.make("gated-rfm", 2, 20_000, 0, "long"): {"metrics": {"local_solves": [[ep, exact], None]}},
    }
    rows = eigenpro_solves(records)
    assert [(r["method"], r["cluster"], r["iteration"], r["converged"]) for r in rows] == [
        ("gated-rfm", 0, 0, True), ("laplace", None, None, True), ("oracle-laplace", 1, None, True),
        ("rfm", None, 0, True), ("rfm", None, 1, False)]
    frame = eigenpro_solves_frame(rows)
    assert len(frame) == 5 and frame["epochs"].tolist() == [129] * 5 and frame["step halvings"].tolist() == [4] * 5
    assert frame["reached the target"].tolist() == [True, True, True, True, False]
    assert frame["training MSE"].tolist() == [3.96e-4] * 5
    assert frame["cluster"].tolist() == [0, pd.NA, 1, pd.NA, pd.NA] and frame["iteration"].tolist() == [0, pd.NA, pd.NA, 0, 1]
    empty = eigenpro_solves_frame([])
    assert empty.empty and list(empty.columns) == list(frame.columns)


def test_stopping_frame_gives_the_training_mse_in_units_of_the_target():
    from monosem.experiments.sample_efficiency import stopping_frame, stopping_summary

    params = {"width": 64, "max_steps": 1000, "target_mse": 4e-4}
    records = {
        Job.make("mlp-relu", 2, 500, 0, "smoke", **params): {"metrics": {"train_mse": 2e-3, "test_mse": 0.1, "stop_step": 1000,
                                                                         "stop_reason": "cap"}},
        Job.make("mlp-relu", 2, 500, 1, "smoke", **params): {"metrics": {"train_mse": 3e-4, "test_mse": 0.1, "stop_step": 400}},
        Job.make("rfm", 2, 500, 0, "smoke"): {"metrics": {"test_mse": 0.2}},
    }
    frame = stopping_frame(stopping_summary(records))
    assert frame["run"].tolist() == [0, 1] and frame["width"].tolist() == [64, 64]
    assert frame["training MSE"].tolist() == [2e-3, 3e-4]
    assert frame["training MSE / target"].tolist() == pytest.approx([5.0, 0.75])
    assert frame["stopped at (updates)"].tolist() == [1000, 400] and frame["stop reason"].tolist() == ["cap", "?"]
    empty = stopping_frame([])
    assert empty.empty and list(empty.columns) == list(frame.columns)


def test_kernel_cells_name_the_eigenpro_revision_only_where_eigenpro_may_run():
    from monosem.experiments.sweeps import EIGENPRO_REVISION, may_run_eigenpro

    p = {"exact_max_n": 11_000}
    assert may_run_eigenpro("laplace", 50, 20_000, p) and not may_run_eigenpro("laplace", 1, 10_000, p)
    # a balanced per-cluster oracle solves about n / K points per cluster
    assert may_run_eigenpro("oracle-rfm", 2, 20_000, p) and not may_run_eigenpro("oracle-rfm", 10, 50_000, p)
    assert may_run_eigenpro("oracle-rfm", 10, 50_000, p | {"zipf": 1.0})  # one cluster may hold most points
    assert may_run_eigenpro("gated-laplace", 10, 20_000, p)  # a learned gate may merge clusters
    assert not may_run_eigenpro("mlp-relu", 1, 200_000, {})
    jobs = {(j.method, j.K, j.n): j for j in sweep("regime", "long")}
    assert jobs[("oracle-rfm", 10, 200_000)].param_dict["eigenpro"] == EIGENPRO_REVISION
    assert "eigenpro" not in jobs[("oracle-rfm", 50, 200_000)].param_dict  # 4 000 per cluster: exact
    assert "eigenpro" not in jobs[("mlp-relu", 10, 200_000)].param_dict


def test_oracle_and_gated_cells_record_each_local_solve(tmp_path):
    """Per-cluster fits keep their solves (one per cluster; RFM one per iteration), so a cluster
    that EigenPro stopped short can be told from a converged one."""
    from monosem.experiments.methods import compute_many

    jobs = sweep("fig4", "smoke", Ks=[2], methods=["oracle-rfm", "gated-laplace"])[:2]
    assert {j.method for j in jobs} == {"oracle-rfm", "gated-laplace"}
    for job, m in zip(jobs, compute_many(jobs, cache=ResultCache(tmp_path))):
        local = m["local_solves"]
        assert len(local) == job.K, job.label()
        for s in local:
            fits = s if job.method == "oracle-rfm" else [s]
            assert len(fits) == (4 if job.method == "oracle-rfm" else 1)
            assert all(f["solver"] in ("exact", "eigenpro", "cg") and f["iterations"] >= 1 for f in fits)


def test_mlp_keys_name_the_training_step_revision_of_their_profile():
    """A network cell's key names the step revision it trains with, except revision 1 (the keys of
    the recorded long run, which were computed with it, stay as they were); a mixture of experts
    trains through autograd and does not read it."""
    from monosem.experiments.methods import _a2_config
    from monosem.profiles import PROFILE_NAMES, get_profile
    from monosem.train import STEP_REVISION, STEP_REVISIONS

    assert all(get_profile(name).step_revision in STEP_REVISIONS for name in PROFILE_NAMES)
    assert get_profile("cpu").step_revision == STEP_REVISION
    assert get_profile("long").step_revision == 1
    (cpu,) = sweep("fig2", "cpu", Ks=[10], ns=[sweep("fig2", "cpu")[0].n], methods=["mlp-relu"])
    (long,) = sweep("fig2", "long", Ks=[10], ns=[20_000], methods=["mlp-relu"], runs=[0])
    assert cpu.param_dict["step"] == STEP_REVISION and _a2_config(cpu.param_dict).step_revision == STEP_REVISION
    assert "step" not in long.param_dict and _a2_config(long.param_dict).step_revision == 1
    gated = sweep("fig4", "cpu", methods=["gated-rfm"])[0]
    assert dict(gated.param_dict["source"])["step"] == STEP_REVISION  # the source network's own key
    moe = [j for j in sweep("moe", "cpu") if j.method.startswith("moe-")]
    assert moe and all("step" not in j.param_dict for j in moe)


def test_a_checkpoint_of_another_step_revision_is_not_resumed(tmp_path):
    """The fingerprint names the revision (revision 1's fingerprint is as before revisions)."""
    from monosem.models import MLPStack
    import torch

    from monosem.train import TrainData, a2_config, train

    x, y = torch.randn(64, 5), torch.randn(64)
    ckpt = tmp_path / "run.pt"
    cfg = a2_config("relu", min_steps=0, max_steps=4, batch=16, eval_every=2, step_revision=2)
    train(MLPStack(5, 8, "relu", [0]), TrainData(x, y), cfg, checkpoint=ckpt, progress=False)
    saved = torch.load(ckpt, weights_only=True)
    assert saved["fingerprint"]["config"]["step_revision"] == 2
    with pytest.raises(ValueError, match="different arguments"):
        train(MLPStack(5, 8, "relu", [0]), TrainData(x, y), a2_config("relu", min_steps=0, max_steps=4, batch=16, eval_every=2, step_revision=1),
              checkpoint=ckpt, progress=False)
    one = tmp_path / "one.pt"
    train(MLPStack(5, 8, "relu", [0]), TrainData(x, y), a2_config("relu", min_steps=0, max_steps=4, batch=16, eval_every=2, step_revision=1),
          checkpoint=one, progress=False)
    assert "step_revision" not in torch.load(one, weights_only=True)["fingerprint"]["config"]
