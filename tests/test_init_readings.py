"""The readings of Appendix A.2's unstated initialization: a typed field of the network's cell
whose default keeps every recorded key, each reading's start at a width, the networks trained
and reloaded under it, and finding 1b per reading from the records."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest
import torch

from monosem.data import model_seed
from monosem.experiments import recorded
from monosem.experiments.cache import Job, ResultCache, job_key
from monosem.experiments.figures import run_figure
from monosem.experiments.families.networks import MLP_REGLU, MLP_RELU, load_mlp
from monosem.experiments.questions import init_analysis as ia, init_readings as ir, init_words as iw, ladder
from monosem.experiments.specs import A2_INIT, NetworkInit, spec_config
from monosem.experiments.sweeps import sweep
from monosem.models import MLPStack
from monosem.profiles import get_profile


def test_the_default_start_keeps_the_key_every_recorded_network_had():
    job = next(j for j in sweep("ladder", "long") if j.method == MLP_REGLU)
    assert job.spec.start == A2_INIT
    assert "start" not in spec_config(job.spec)
    other = dataclasses.replace(job.spec, start=NetworkInit(hidden_scale=0.1))
    assert spec_config(other)["start"]["hidden_scale"] == 0.1
    assert job_key(spec_config(other)) != job_key(spec_config(job.spec))
    # every recorded ladder network is found under the key its file has
    found = recorded.load_recorded_cells(sweep("ladder", "long"), "long")
    assert sum(j.method == MLP_REGLU for j in found) >= 20


@pytest.mark.parametrize("field, value", [("init", "xavier"), ("hidden_scale", 0.0), ("readout_lr", -1.0), ("output_scale", 0.0),
                                          ("value_scale", float("nan"))])
def test_a_bad_start_names_its_field(field, value):
    with pytest.raises(ValueError, match=field):
        NetworkInit(**{field: value})


def test_each_reading_gives_its_start_at_a_width():
    paper_width = get_profile("paper").sample_efficiency.width
    assert ir.DEFAULT_READING.start(1024) == A2_INIT
    # muP's readout rate is the plain one at the paper's width: its cell there is the default's
    assert ir.READINGS["muP"].start(paper_width) == A2_INIT
    assert ir.READINGS["muP"].start(1024).readout_lr == paper_width / 1024
    mf = ir.READINGS["mean-field"].start(2048)
    assert (mf.init, mf.output_scale, mf.readout_lr) == ("balanced", 1 / 2048, 1.0)
    sq = ir.READINGS["readout rate x sqrt(d/m)"].start(1024)
    assert math.isclose(sq.readout_lr, math.sqrt(20 / 1024)) and sq.hidden_scale == 0.1
    with pytest.raises(ValueError, match="already registered"):
        ir.register_reading(ir.A2Reading("mean-field"))
    with pytest.raises(ValueError, match="readout_rate"):
        ir.A2Reading("x", readout_rate="ntk")


def test_the_sweeps_hold_every_reading_and_the_defaults_are_the_ladders_cells():
    P = get_profile("long")
    screen, paper = ir.screen_jobs(P), ir.paper_jobs(P)
    nets = [j for j in screen if j.method in ir.NETWORKS]
    assert {ir.reading_of(j).name for j in nets if j.method == MLP_REGLU} == set(ir.READINGS)
    assert {ir.reading_of(j).name for j in nets if j.method == MLP_RELU} == {ir.DEFAULT_READING.name, *ir.SCREEN_RELU}
    lad = set(ladder.ladder_jobs(P))
    defaults = [j for j in screen + paper if j.method in ir.NETWORKS and ir.reading_of(j) == ir.DEFAULT_READING]
    assert defaults and all(j in lad for j in defaults)
    assert {ir.reading_of(j).name for j in paper if j.method in ir.NETWORKS} == {ir.DEFAULT_READING.name, *ir.PAPER_READINGS}
    sizes = ir.init_sizes(P)
    assert (sizes.paper.width, sizes.paper.batch) == (P.sample_efficiency.width * 4, P.sample_efficiency.batch * 4)


def test_a_network_trains_under_its_reading_and_reloads_with_it(tmp_path):
    P = get_profile("smoke")
    sizes = ir.init_sizes(P)
    job = ir.reading_job(P, MLP_REGLU, ir.READINGS["mean-field"], sizes.foot, sizes.K, 0, sizes.n_test)
    assert job.spec.start.output_scale == 1 / sizes.foot.width
    # the stack it trains starts balanced, with the mean-field output
    stack = MLPStack(20, job.spec.width, "reglu", [model_seed(0)], **job.spec.start.stack_kwargs())
    assert stack.output_scale == 1 / sizes.foot.width
    assert torch.allclose(stack.a[0].abs(), torch.sqrt(stack.W[0, : job.spec.width].square().sum(1) + stack.b[0, : job.spec.width].square()))
    cache = ResultCache(tmp_path)
    records = run_figure("init-screen", "smoke", cache=cache, n_jobs=1, progress=False, methods=[MLP_REGLU])
    rec = records[job]
    net = load_mlp(job, cache)
    assert net.output_scale == job.spec.start.output_scale
    # the reloaded network predicts what the trained one scored
    from monosem.experiments.methods import dataset
    _, _, (Xte, yte, _) = dataset(job)
    with torch.no_grad():
        mse = float(((net(Xte.to(net.W.dtype)).double() - yte.double().reshape(-1)) ** 2).mean())
    assert math.isclose(mse, rec["metrics"]["test_mse"], rel_tol=1e-4)


@pytest.fixture(scope="module")
def long_records():
    recs = {}
    for name in ("init-screen", "init-paper", "init-best"):
        recs |= recorded.load_recorded_cells(sweep(name, "long"), "long")
    return recs, recorded.load_recorded_cells(sweep("init-gap", "long"), "long")


def test_the_default_readings_rows_are_the_ladders_verdicts(long_records):
    records, gaps = long_records
    frame = ia.init_frame(records, gaps, "long")
    lad = recorded.load_recorded_cells(sweep("ladder", "long"), "long")
    sizes = ir.init_sizes("long")
    for name in ia.RUNGS:
        rung = getattr(sizes, name)
        verdict = dict(ladder.rung_verdicts(lad, "long", 50, network=MLP_REGLU))[rung]
        row = frame[(frame["rung"] == name) & (frame["reading"] == ir.DEFAULT_READING.name) & (frame["network"] == "reglu")].iloc[0]
        # the screen holds run 0 at the foot; init-best every run the ladder has on its rungs
        runs = 1 if name == "foot" else rung.runs
        assert row["runs"] == runs
        expected = dict(verdict.ratios)[0] if runs == 1 else verdict.mean_ratio
        assert math.isclose(row["MLP / oracle"], expected, rel_tol=1e-9)


def test_init_best_trains_the_best_reading_beside_the_ladders_cells():
    for profile in ("long", "smoke"):
        P, sizes = get_profile(profile), ir.init_sizes(profile)
        jobs = [j for j in ir.best_jobs(P) if j.method in ir.NETWORKS]
        best = [j for j in jobs if ir.reading_of(j).name == ir.BEST_READING]
        paper = {j.run for j in best if j.K == sizes.K and (j.spec.width, j.spec.batch) == (sizes.paper.width, sizes.paper.batch)}
        assert paper == set(range(sizes.runs)) and all(j.method == ir.BEST_NETWORK for j in best if j.K == sizes.K)
        wide = [j for j in best if (j.spec.width, j.spec.batch) == (sizes.wide.width, sizes.wide.batch)]
        assert len(wide) == min(ir.WIDE_RUNS, sizes.runs)
        if sizes.control_K is not None:
            control = [j for j in best if j.K == sizes.control_K]
            assert sorted((j.method, j.run) for j in control) == sorted(
                [(ir.BEST_NETWORK, r) for r in range(sizes.runs)] + [(m, 0) for m in ir.NETWORKS if m != ir.BEST_NETWORK])
        if profile == "long":
            lad = set(ladder.ladder_jobs(P))
            assert all(j in lad for j in jobs if ir.reading_of(j) == ir.DEFAULT_READING)
            assert set(ir.paper_jobs(P)) & set(best)  # run 0 is init-paper's own cell


def test_the_screen_trains_relu_under_the_two_best_readings(long_records):
    records, gaps = long_records
    frame = ia.init_frame(records, gaps, "long")
    foot = frame[(frame["rung"] == "foot") & (frame["network"] == "reglu") & (frame["reading"] != ir.DEFAULT_READING.name)]
    assert set(foot["reading"]) == set(ir.READINGS) - {ir.DEFAULT_READING.name}  # every reading screened
    assert set(foot.nsmallest(2, "MLP / oracle")["reading"]) == set(ir.SCREEN_RELU)


def test_the_best_reading_is_the_one_run_0_chose(long_records):
    records, _ = long_records
    choice = ia.run0_choice(records, "long")
    if choice is None:
        pytest.skip("no kept reading is recorded on the paper's network yet")
    assert choice == (ir.BEST_READING, ir.BEST_NETWORK)
    sizes = ir.init_sizes("long")
    own = ia.reading_records({j: r for j, r in records.items() if j.run == 0}, sizes, "wide", ir.BEST_READING)
    wide = ia.reading_verdict(own, ir.BEST_NETWORK, sizes.K, sizes.wide.n)
    if wide is not None and wide.mean_ratio < 2:
        assert ir.WIDE_RUNS == sizes.runs  # run 0 came within finding 1b's threshold: five runs there


def test_every_recorded_reading_is_judged_by_the_one_rule(long_records):
    records, gaps = long_records
    frame = ia.init_frame(records, gaps, "long")
    for _, row in frame.iterrows():
        ratios = [float(x) for x in row["per run"].split(", ")]
        assert row["verdict"].startswith(("not settled", "indicated", "reproduces", "does not reproduce"))
        assert row["within 2×"] == f"{sum(r < 2 for r in ratios)} of {len(ratios)}"
    claims = ia.init_claims(records, "04_sample_efficiency", "long")
    for c in claims:
        assert c.recomputed() == c.verdict and "A.2 read as" in c.scale
    numbers = iw.init_numbers(frame, records, "long")
    assert numbers["ir_K"] == "50" and numbers["ir_count"] == str(len(ir.READINGS))
    json.dumps(numbers)


def test_the_readings_figure_draws_every_rung(long_records):
    records, gaps = long_records
    fig = ia.plot_readings(ia.init_frame(records, gaps, "long"))
    assert len(fig.axes) == len(ia.RUNGS)


def test_findings_1a_and_2_are_judged_under_a_reading(long_records):
    records, _ = long_records
    fig2 = recorded.load_recorded_cells(sweep("fig2", "long"), "long")
    claims = ia.best_reading_claims(records, fig2, "04_sample_efficiency", ir.DEFAULT_READING.name, "long")
    assert {c.claim for c in claims} == {ia.CLAIMS["1a"], ia.CLAIMS["2"]}
    for c in claims:
        assert c.recomputed() == c.verdict and f"A.2 read as {ir.DEFAULT_READING.name}" in c.scale
    one_a = next(c for c in claims if c.claim == ia.CLAIMS["1a"])
    assert one_a.runs == ir.init_sizes("long").runs  # the ladder's five runs of the paper's network


def test_the_predictive_alignment_divides_by_the_predictive_part_alone():
    from monosem.specialization import alignment, predictive_alignment

    V = torch.tensor([[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])  # two routing, two predictive coordinates
    W = torch.tensor([[3.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.0]])
    A, _ = alignment(W, V)
    Ap, c, off = predictive_alignment(W, V)
    assert torch.allclose(A, torch.tensor([1 / math.sqrt(10), 1 / math.sqrt(2), 0.0], dtype=torch.float64))
    assert torch.allclose(Ap, torch.tensor([1.0, 1 / math.sqrt(2), 0.0], dtype=torch.float64)) and c[0] == 0
    assert torch.allclose(off, torch.tensor([3 / math.sqrt(10), 0.0, 1.0], dtype=torch.float64))
    # eq. (1) is bounded by the predictive share of the norm
    assert bool((A <= (1 - off ** 2).sqrt() + 1e-12).all())
    with pytest.raises(ValueError, match="must share d"):
        predictive_alignment(W, V[:, :3])


def test_a_network_record_holds_both_cosines_and_the_routing_share():
    from monosem.experiments.methods import specialization
    from monosem.models import MLP

    P = get_profile("smoke")
    sizes = ir.init_sizes(P)
    job = ir.reading_job(P, MLP_REGLU, ir.READINGS["small init"], sizes.foot, sizes.K, 0, sizes.n_test)
    from monosem.experiments.methods import dataset

    model = dataset(job)[0]
    m = specialization(MLP(20, 64, "reglu", seed=1, init="balanced"), model, by_cluster=True)
    assert {"frac_A071_predictive", "median_A", "median_A_predictive", "median_off_predictive_norm"} <= set(m)
    assert m["median_A"] <= math.sqrt(1 - m["median_off_predictive_norm"] ** 2) + 0.05
    assert sum(m["specialized_predictive_by_cluster"]) == round(m["frac_A071_predictive"] * m["n_active"])


def test_the_page_says_1b_fails_under_every_reading_only_when_it_does():
    sizes = ir.init_sizes("long")

    def frame(*rows):
        return pd.DataFrame([{"K": sizes.K, "rung": "paper", "reading": r, "network": "reglu", "MLP / oracle": x, "runs": n, "verdict": v,
                              "within 2×": f"{int(x < 2) * n} of {n}", "run ids": ", ".join(map(str, range(n)))} for r, x, n, v in rows])
    default = (ir.DEFAULT_READING.name, 9.0, 5, "does not reproduce")
    some = frame(default, (ir.PAPER_READINGS[0], 4.0, 1, "not settled (1 run)"))
    assert "not recorded there yet" in iw._decides(some, {}, sizes)
    every = [(name, 4.0 + i, 1, "not settled (1 run)") for i, name in enumerate(ir.PAPER_READINGS)]
    assert "fewer than" in iw._decides(frame(default, *every), {}, sizes)
    five = [(every[0][0], 4.0, 5, "does not reproduce (5 runs)"), *every[1:]]
    words = iw._decides(frame(default, *five), {}, sizes)
    assert "fails on the paper's network under every reading tried" in words
    assert "the others at 5.00–9.00×, the default on 5 runs and the rest on run 0" in words
    mixed = [(every[0][0], 2.5, 5, "not settled"), *every[1:]]
    mixed = frame(default, *mixed)
    mixed.loc[1, "within 2×"] = "2 of 5"
    words = iw._decides(mixed, {}, sizes)
    assert "neither reproduces nor fails" in words and "2 of 5 runs are within" in words
    near = [(every[0][0], 1.5, 1, "indicated (1 run)"), *every[1:]]
    assert "within 2× there" in iw._decides(frame(default, *near), {}, sizes)


def test_every_readings_ratio_is_recomputed_from_the_cells(long_records):
    """Each row's ratio rebuilt from the recorded cells alone: the network's test MSE over the
    better oracle's (lower mean over the same runs, RFM by its best iteration), ratio of means."""
    from monosem.experiments.verdicts import scored

    records, gaps = long_records
    frame = ia.init_frame(records, gaps, "long")
    sizes = ir.init_sizes("long")
    assert not frame.empty
    for _, row in frame.iterrows():
        rung = getattr(sizes, row["rung"])
        runs = [int(r) for r in row["run ids"].split(", ")]
        nets = {j.run: scored(rec, "best") for j, rec in records.items()
                if j.method == f"mlp-{row['network']}" and j.K == sizes.K and j.n == rung.n
                and (j.spec.width, j.spec.batch) == (rung.width, rung.batch) and ir.reading_of(j).name == row["reading"]}
        assert sorted(nets) == runs
        oracles = {m: {j.run: scored(rec, "best") for j, rec in records.items() if j.method == m and j.K == sizes.K and j.n == rung.n}
                   for m in ("oracle-rfm", "oracle-laplace")}
        better = min(oracles, key=lambda m: np.mean([oracles[m][r] for r in runs]))
        expected = np.mean([nets[r] for r in runs]) / np.mean([oracles[better][r] for r in runs])
        assert math.isclose(row["MLP / oracle"], expected, rel_tol=1e-9), (row["rung"], row["reading"], row["network"])


def test_the_best_reading_is_paired_with_the_default_run_by_run(long_records):
    """The page's run-by-run count against the default, rebuilt from the table's per-run ratios."""
    records, gaps = long_records
    frame = ia.init_frame(records, gaps, "long")
    paper = frame[frame["rung"] == "paper"]

    def per_run(reading, network):
        row = paper[(paper["reading"] == reading) & (paper["network"] == network)].iloc[0]
        return dict(zip((int(r) for r in row["run ids"].split(", ")), (float(x) for x in row["per run"].split(", "))))

    best = paper[paper["reading"] != ir.DEFAULT_READING.name].sort_values("MLP / oracle").iloc[0]
    mine, theirs = per_run(best["reading"], best["network"]), per_run(ir.DEFAULT_READING.name, best["network"])
    shared = sorted(set(mine) & set(theirs))
    lower = sum(mine[r] < theirs[r] for r in shared)
    assert shared
    assert f"lower in {lower} of {len(shared)} run" in iw._decides(frame, records, ir.init_sizes("long"))


def test_the_control_k_has_gap_cells_under_the_best_reading_alone():
    P, sizes = get_profile("long"), ir.init_sizes("long")
    control = [g for g in ir.gap_cells(P) if g.K == sizes.control_K]
    nets = {(g.spec.network.activation, g.run) for g in control}
    assert nets == {(ir.BEST_NETWORK.removeprefix("mlp-"), r) for r in range(sizes.runs)} | {
        (m.removeprefix("mlp-"), 0) for m in ir.NETWORKS if m != ir.BEST_NETWORK}
    assert all(ir.reading_of(Job(f"mlp-{g.spec.network.activation}", g.data, g.spec.network, g.profile)).name == ir.BEST_READING
               for g in control)


def test_the_control_gap_cells_score_the_same_runs_as_the_control_table(long_records):
    """Each control gap cell of the best network, on its own, gives that run's ratio of means in
    the control table (the clusters partition the test set); the page's words are those cells'."""
    records, gaps = long_records
    sizes = ir.init_sizes("long")
    control = {g: r for g, r in gaps.items() if g.K == sizes.control_K and g.spec.network.activation == ir.BEST_NETWORK.removeprefix("mlp-")}
    frame = ia.init_frame(records, gaps, "long", K=sizes.control_K)
    words = iw.best_numbers(records, frame, "long", gaps)["ir_control_gap"]
    if not control:
        assert words == "not recorded yet"
        pytest.skip("no control gap cell recorded yet")
    row = frame[(frame["reading"] == ir.BEST_READING) & (frame["network"] == ir.BEST_NETWORK.removeprefix("mlp-"))].iloc[0]
    per_run = dict(zip((int(r) for r in row["run ids"].split(", ")), (float(x) for x in row["per run"].split(", "))))
    for g, rec in control.items():
        alone = ladder.gap_robust(ladder.gap_frame({g: rec})).iloc[0]
        assert alone["ratio of means"] == pytest.approx(per_run[g.run], abs=0.006), g.run
    robust = ladder.gap_robust(ladder.gap_frame(control)).iloc[0]
    assert words.startswith(f"{len(control)} run") and f"{robust['median per-cluster ratio']:.3g}\u00d7" in words


def test_the_wide_rungs_words_follow_run_0_and_the_rule(long_records):
    records, gaps = long_records
    frame = ia.init_frame(records, gaps, "long")
    words = iw.init_numbers(frame, records, "long")["ir_wide_words"]
    row = frame[(frame["rung"] == "wide") & (frame["reading"] == ir.BEST_READING)]
    if row.empty:
        pytest.skip("the best reading has no run on the wide rung yet")
    row = row.iloc[0]
    assert words.startswith(f"{ir.BEST_READING} {row['MLP / oracle']:.2f}×")
    if row["runs"] == 1:
        close = row["MLP / oracle"] < 2
        assert ("does not come within" in words) is not close
        assert ir.WIDE_RUNS == (ir.init_sizes("long").runs if close else 1)


def test_the_kept_findings_words_name_every_verdict_and_dissent(long_records):
    records, _ = long_records
    fig2 = recorded.load_recorded_cells(sweep("fig2", "long"), "long")
    claims = [c for name in (ir.BEST_READING, ir.DEFAULT_READING.name)
              for c in ia.best_reading_claims(records, fig2, "04_sample_efficiency", name, "long")]
    words = iw.kept_words(claims)
    assert claims and iw.kept_words([]) == "none recorded yet"
    for c in claims:
        assert f"under {c.detail.removeprefix('A.2 read as ')}, " in words and c.label in words
        for r in c.readings:
            assert (f'"{r.name}" ' in words) is (r.verdict != c.verdict)


def test_the_control_words_pair_the_best_reading_with_the_default_on_its_runs(long_records):
    records, gaps = long_records
    sizes = ir.init_sizes("long")
    frame = ia.init_frame(records, gaps, "long", K=sizes.control_K)
    words = iw.best_numbers(records, frame, "long", gaps)["ir_control_words"]
    net = ir.BEST_NETWORK.removeprefix("mlp-")
    rows = {r["reading"]: r for _, r in frame[frame["network"] == net].iterrows()}
    if ir.BEST_READING not in rows or ir.DEFAULT_READING.name not in rows:
        pytest.skip("the control has no pair of readings recorded yet")
    best, default = rows[ir.BEST_READING], rows[ir.DEFAULT_READING.name]
    assert words.startswith(f"{ir.BEST_READING} {best['MLP / oracle']:.2f}×")
    if default["runs"] < best["runs"]:
        per_run = dict(zip(best["run ids"].split(", "), best["per run"].split(", ")))
        (run,) = default["run ids"].split(", ")[:1]
        if default["runs"] == 1:
            assert f"on the default's run {run}, {per_run[run]}× against its {default['MLP / oracle']:.2f}×" in words


def test_a_reading_that_coincides_with_the_default_shares_its_cells(long_records):
    records, gaps = long_records
    sizes = ir.init_sizes("long")
    width = sizes.paper.width
    same = ir.same_as_default(width)
    for name in same:
        assert ir.READINGS[name].start(width) == ir.DEFAULT_READING.start(width)
        assert ir.READINGS[name].start(sizes.foot.width) != ir.DEFAULT_READING.start(sizes.foot.width)
        assert name not in ir.PAPER_READINGS  # it would train the default's cells again
    assert set(ir.READINGS) - {ir.DEFAULT_READING.name} - set(same) >= set(ir.PAPER_READINGS)
    frame = ia.init_frame(records, gaps, "long")
    words = iw.init_numbers(frame, records, "long")
    assert all(words["ir_same"].count(f"{name} starts every network") == 1 for name in same)
    if "fails on the paper's network under every reading tried" in words["ir_decides"]:
        tried = len(set(frame.loc[frame["rung"] == "paper", "reading"])) + len(same)
        assert f"every reading tried ({tried}: " in words["ir_decides"]
