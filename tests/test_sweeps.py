"""The declared sweeps: the paper's grids, shared cells, the budget's cut, what a key holds."""

from __future__ import annotations

import dataclasses

import pytest
from monosem.experiments.cache import ResultCache
from monosem.experiments.specs import DataSpec, SolverSpec, width_of
from monosem.experiments.sweeps import figure_of, sweep


def test_profiles_share_cells_that_compute_the_same_thing():
    from monosem.experiments.sweeps import sweep

    fig2 = {j.key(): j for j in sweep("fig2", "long")}
    regime = {j.key(): j for j in sweep("regime", "long")}
    shared = set(fig2) & set(regime)
    # K = 10, 50 x n = 20k, 50k x run 0 x (ReLU and ReGLU at width 1 024, RFM, 2 oracles, Bayes)
    assert len(shared) == 2 * 2 * 6
    assert {width_of(regime[k]) for k in regime} == {256, 1024, None}


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
    # every method a cut names is a registered method (a renamed one would leave the cut silently empty)
    from monosem.experiments.registry import method_of
    from monosem.profiles import PROFILE_NAMES

    for name in PROFILE_NAMES:
        P = get_profile(name)
        for sizes in vars(P).values():
            for method, _ in getattr(sizes, "method_max_n", ()):
                method_of(method)
    # a profile without a cut declares the whole grid
    cpu = get_profile("cpu").sample_efficiency
    assert len(sweep("fig6", "cpu")) == len(cpu.Ks) * len(cpu.ns) * cpu.runs * 5


def test_the_long_profile_declares_five_runs_of_every_cell_it_judges():
    """Every long-profile verdict can rest on five runs: Figures 2, 4 and 6 declare runs 0-4 at
    every K, Figure 4 on the paper's K grid."""
    from monosem.profiles import get_profile

    L = get_profile("long")
    for fig in ("fig2", "fig4", "fig6"):
        jobs = sweep(fig, L)
        for key in {(j.method, j.K, j.n) for j in jobs}:
            assert {j.run for j in jobs if (j.method, j.K, j.n) == key} == set(range(5)), (fig, key)
    assert {j.K for j in sweep("fig4", L)} == set(get_profile("paper").gates.Ks)


def test_sweeps_declare_the_papers_grids():
    jobs = sweep("fig2", "paper")
    assert {j.K for j in jobs} == {1, 2, 10, 50} and {j.n for j in jobs} == {20_000, 50_000, 100_000, 200_000}
    assert {j.run for j in jobs} == set(range(5))
    assert {j.method for j in jobs} == set(figure_of("fig2").methods)
    relu = next(j for j in jobs if j.method == "mlp-relu")
    p = relu.spec
    assert (p.width, p.batch, p.lr, p.final_lr) == (4096, 4096, 1e-2, 1e-4)
    assert (p.min_steps, p.max_steps, p.eval_every, p.patience_evals) == (20_000, 200_000, 500, 60)
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


def test_the_key_holds_what_the_computation_reads(monkeypatch):
    """Precision, the full A.2 schedule and a gated cell's solver settings are in the key, and
    the computations build their configurations from the key alone."""
    from monosem.experiments.families import gated as methods, networks

    job32 = sweep("fig2", "smoke", Ks=[10], ns=[500], methods=["mlp-relu"])[0]
    monkeypatch.setenv("MONOSEM_DTYPE", "float64")
    job64 = sweep("fig2", "smoke", Ks=[10], ns=[500], methods=["mlp-relu"])[0]
    monkeypatch.delenv("MONOSEM_DTYPE")
    assert job32.key() != job64.key() and job64.data.dtype == "float64"
    p = dataclasses.replace(job32.spec, final_lr=1e-5, min_rel_improvement=1e-3)
    cfg = p.train_config()
    assert cfg.final_lr_ratio == pytest.approx(1e-5 / p.lr) and cfg.min_rel_improvement == 1e-3
    gated = sweep("fig4", "cpu", Ks=[10], ns=[5_000], methods=["gated-rfm"])[0]
    seen = {}

    class Capture(Exception):
        pass

    def fake(mlp, **kw):
        seen.update(kw["local_params"])
        raise Capture

    monkeypatch.setattr(methods, "MLPGatedRegressor", fake)
    monkeypatch.setattr(networks, "load_mlp", lambda job, cache, device=None: None)
    monkeypatch.setattr(methods.ResultCache, "has", lambda self, job: True)
    with pytest.raises(Capture):
        methods.compute_gated(gated, ResultCache("/nonexistent"))
    p = gated.spec.local
    assert seen["agop_samples"] == p.agop_samples == 2_000  # the cpu profile's, not RFM's default 20 000
    assert (seen["ridge"], seen["max_iter"], seen["dtype"]) == (p.solver.ridge, p.solver.max_iter, gated.data.dtype)


def test_kernel_cells_name_the_eigenpro_revision_only_where_eigenpro_may_run():
    from monosem.experiments.sweeps import EIGENPRO_REVISION, may_run_eigenpro

    s = SolverSpec(ridge=1e-6, exact_max_n=11_000, target_mse=1e-6, max_iter=200)

    def may(method, K, n, **data):
        return may_run_eigenpro(method, DataSpec(K, n, 0, 8, **data), s)

    assert may("laplace", 50, 20_000) and not may("laplace", 1, 10_000)
    # a balanced per-cluster oracle solves about n / K points per cluster
    assert may("oracle-rfm", 2, 20_000) and not may("oracle-rfm", 10, 50_000)
    assert may("oracle-rfm", 10, 50_000, zipf=1.0)  # one cluster may hold most points
    assert may("gated-laplace", 10, 20_000)  # a learned gate may merge clusters
    jobs = {(j.method, j.K, j.n): j for j in sweep("regime", "long")}
    assert jobs[("oracle-rfm", 10, 200_000)].spec.solver.eigenpro_revision == EIGENPRO_REVISION
    assert jobs[("oracle-rfm", 50, 200_000)].spec.solver.eigenpro_revision is None  # 4 000 per cluster: exact
    gated = sweep("fig4", "long", Ks=[10], ns=[20_000], methods=["gated-rfm"], runs=[0])[0]
    assert gated.spec.local.solver.eigenpro_revision == EIGENPRO_REVISION


def test_mlp_keys_name_the_training_step_revision_of_their_profile():
    """A network cell's key names the step revision it trains with (a gated cell's source network
    too); a mixture of experts trains through autograd and does not read it."""
    from monosem.profiles import PROFILE_NAMES, get_profile
    from monosem.train import STEP_REVISION, STEP_REVISIONS

    assert all(get_profile(name).step_revision in STEP_REVISIONS for name in PROFILE_NAMES)
    assert get_profile("cpu").step_revision == STEP_REVISION
    assert get_profile("long").step_revision == 1
    (cpu,) = sweep("fig2", "cpu", Ks=[10], ns=[sweep("fig2", "cpu")[0].n], methods=["mlp-relu"])
    (long,) = sweep("fig2", "long", Ks=[10], ns=[20_000], methods=["mlp-relu"], runs=[0])
    assert cpu.config()["spec"]["step_revision"] == STEP_REVISION and cpu.spec.train_config().step_revision == STEP_REVISION
    assert long.config()["spec"]["step_revision"] == 1 and long.spec.train_config().step_revision == 1
    gated = sweep("fig4", "cpu", methods=["gated-rfm"])[0]
    assert gated.config()["spec"]["source"]["step_revision"] == STEP_REVISION  # the source network's own key
    moe = [j for j in sweep("moe", "cpu") if j.method.startswith("moe-")]
    assert moe and all(j.spec.network.step_revision == 1 for j in moe)


def test_a_stack_never_mixes_data_models():
    """Networks of one stack share one pool per (K, run): cells of the rare-regime or overlap grid
    that differ only in their Zipf exponent or separation train in different stacks."""
    from monosem.experiments.methods import plan

    for figure in ("zipf", "overlap"):
        jobs = [j for j in sweep(figure, "smoke") if j.method == "mlp-relu"]
        for batch in plan(jobs):
            assert len({(j.data.gamma, j.data.zipf, j.data.n_test, j.data.dtype) for j in batch}) == 1
        assert len(plan(jobs)) >= 2
