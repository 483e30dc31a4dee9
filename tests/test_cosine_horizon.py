"""The cosine-horizon ablation retrains a Figure 2 network with only the cosine's horizon changed."""

from __future__ import annotations

import pytest

from monosem.experiments.cache import Job, ResultCache
from monosem.experiments.methods import compute
from monosem.experiments.questions import cosine_horizon as ch
from monosem.experiments.sweeps import sweep
from monosem.profiles import get_profile
from monosem.train import cosine_lr


def _source() -> Job:
    return sweep("fig2", "smoke", Ks=[10], ns=[500], methods=["mlp-relu"])[0]


def test_the_spec_names_its_horizon_and_rejects_a_bad_one():
    src = _source()
    job = ch.horizon_job(src, 120)
    assert job.spec.train_config().schedule_steps == 120
    assert job.spec.train_config().max_steps == src.spec.max_steps  # nothing else moves
    assert job.key() != src.key() and ch.source_of(job) == src
    assert "cosine over 120 updates" in job.label()
    with pytest.raises(ValueError, match="schedule_steps"):
        ch.horizon_job(src, src.spec.max_steps + 1)
    with pytest.raises(ValueError, match="schedule_steps"):
        ch.HorizonSpec(src.spec, 0)


def test_the_schedule_holds_the_final_rate_after_the_horizon():
    assert cosine_lr(150, 100, 1.0, 0.01) == pytest.approx(0.01)
    assert cosine_lr(100, 100, 1.0, 0.01) == pytest.approx(0.01)


def test_a_horizon_at_the_cap_retrains_the_source_cell_and_a_short_one_differs(tmp_path):
    """Same machine, same stack of one: the cosine over max_steps is the Figure 2 cell to the bit;
    over the minimum number of updates it is another run (a lower rate after it)."""
    src = _source()
    cache = ResultCache(tmp_path)
    cell = compute(src, cache)
    same = compute(ch.horizon_job(src, src.spec.max_steps), cache)
    assert same["test_mse"] == cell["test_mse"] and same["stop_step"] == cell["stop_step"]
    short = compute(ch.horizon_job(src, src.spec.min_steps // 2), cache)
    assert short["test_mse"] != cell["test_mse"]
    records = {src: {"metrics": cell}, ch.horizon_job(src, 50): {"metrics": short}}
    table = ch.horizon_table(records)
    assert list(table.index) == [(10, "relu", 0)]
    assert table["own / cap"].iloc[0] == pytest.approx(short["test_mse"] / cell["test_mse"])
    verdicts = ch.findings_by_horizon(records, records, Ks=[10], n=500)
    assert verdicts.empty  # ReGLU was not retrained: no run is complete
    numbers = ch.horizon_numbers(table, verdicts)
    assert numbers["hz_cells"] == "1" and numbers["hz_earlier"] == f"{int(short['stop_step'] < cell['stop_step'])} of 1" and numbers["hz_verdicts"] == "no run has every network retrained yet"


def test_the_long_profile_retrains_its_recorded_networks():
    """Every cell of the ablation's grid with a recorded source is a cell of the figure, its
    horizon the source's recorded stop step; a profile with no recorded sources has none."""
    L = get_profile("long")
    jobs = sweep(ch.METHOD, L)
    assert len(jobs) == len(ch.ABLATION_KS) * len(ch.ABLATION_RUNS) * 2
    assert {j.n for j in jobs} == {min(L.sample_efficiency.ns)}
    assert all(0 < j.spec.schedule_steps <= j.spec.network.max_steps for j in jobs)
    assert sweep(ch.METHOD, "smoke") == []
    assert ch.horizon_table({}).empty


def test_the_verdicts_are_judged_with_the_retrained_networks_in_place():
    """Synthetic records: ReGLU beats ReLU with the recorded networks and loses with the retrained
    ones, so finding 2 changes and the page says so; the kernels are the same cells in both."""
    jobs = {j.method: j for j in sweep("fig2", "smoke", Ks=[10], ns=[500])}
    mse = {"mlp-relu": 0.02, "mlp-reglu": 0.01, "rfm": 0.05, "laplace": 0.06, "oracle-laplace": 0.009,
           "oracle-rfm": 0.008, "bayes": 0.0004}
    records = {j: {"metrics": {"test_mse": mse[m]}} for m, j in jobs.items()}
    retrained = {ch.horizon_job(jobs["mlp-relu"], 100): {"metrics": {"test_mse": 0.01}},
                 ch.horizon_job(jobs["mlp-reglu"], 100): {"metrics": {"test_mse": 0.03}}}
    verdicts = ch.findings_by_horizon(records, retrained, Ks=[10], n=500)
    cap, own = "verdict, cosine over the cap", "verdict, cosine over its own length"
    # one run: at most indicated, and a negative result on it is not settled
    assert verdicts.loc["2", cap] == "indicated" and verdicts.loc["2", own] == "not settled"
    assert verdicts.loc["1a", cap] == verdicts.loc["1a", own] == "indicated"  # the best MLP is 0.01 either way
    table = ch.horizon_table(records | {j: {"metrics": r["metrics"] | {"stop_step": 100, "stop_reason": "cap"}}
                                        for j, r in retrained.items()}
                             | {jobs[m]: {"metrics": {"test_mse": mse[m], "stop_step": 150}} for m in ("mlp-relu", "mlp-reglu")})
    said = ch.horizon_numbers(table, verdicts)["hz_verdicts"]
    assert "finding 2 goes from “indicated” to “not settled”" in said and "1a" not in said


def test_the_recorded_cells_export_with_their_horizon():
    from monosem.experiments.export import export_rows

    L = get_profile("long")
    records = {j: r for j, r in ch.recorded_horizon(L).items() if j.method == ch.METHOD}
    rows = export_rows(ch.METHOD, L.name, records)
    assert len(rows) == len(records) > 0
    assert all(r["schedule_steps"] <= r["max_steps"] and r["activation"] in ("relu", "reglu") for r in rows)
