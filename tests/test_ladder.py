"""Finding 1b's scale ladder: one knob per rung, the long profile's own cells at its foot, the
paper's network at its top, and every network's stop reason in its table."""

from __future__ import annotations

import dataclasses

import pandas as pd

import pytest

from monosem.experiments.cache import ResultCache
from monosem.experiments.figures import run_figure
from monosem.experiments.questions import ladder
from monosem.experiments.sweeps import sweep
from monosem.profiles import get_profile
from monosem.tables import thousands
from monosem.train.step import FASTEST_STEP_REVISION

_KNOB_FIELDS = {"width": ("width",), "batch": ("batch",), "n": ("n",)}


@pytest.fixture(scope="module")
def smoke_ladder(tmp_path_factory):
    """The smoke ladder and its gap cells, computed once (seconds)."""
    cache = ResultCache(tmp_path_factory.mktemp("ladder"))
    records = run_figure("ladder", "smoke", cache=cache, n_jobs=1, progress=False)
    gaps = run_figure("ladder-gap", "smoke", cache=cache, n_jobs=1, progress=False)
    return records, gaps


@pytest.mark.parametrize("profile", ["smoke", "long"])
def test_every_rung_moves_one_knob(profile):
    rungs = ladder.ladder_sizes(profile).rungs
    assert rungs[0].knob == "start"
    for before, rung in zip(rungs, rungs[1:]):
        moved = {f for f in ("width", "batch", "n") if getattr(before, f) != getattr(rung, f)}
        assert moved == set(_KNOB_FIELDS[rung.knob]), (before, rung)


def test_the_long_ladder_runs_from_the_long_network_to_the_papers():
    long, paper = get_profile("long").sample_efficiency, get_profile("paper").sample_efficiency
    sizes = ladder.ladder_sizes("long")
    first, top = sizes.rungs[0], sizes.rungs[-1]
    assert (first.width, first.batch, first.n) == (long.width, long.batch, max(long.ns))
    assert (top.width, top.batch, top.n) == (paper.width, paper.batch, max(paper.ns))
    assert [r.n for r in sizes.rungs if r.knob == "n"] == [n for n in paper.ns if n > max(long.ns)]
    assert sizes.Ks == (50, 10) and sizes.oracle_runs == 5
    # the paper's network at the long profile's largest n has five runs, ReLU beside ReGLU
    paper_net = next(r for r in sizes.rungs if r.knob == "batch")
    assert paper_net.runs == 5 and paper_net.relu
    # at K = 50 the widest batch-1 024 network has five runs too; the control K has run 0 above its foot
    widest = [r for r in sizes.rungs if r.knob == "width"][-1]
    assert widest.width == paper.width and sizes.runs(widest, 50) == 5 and sizes.runs(widest, 10) == 1
    jobs = ladder.ladder_jobs(get_profile("long"))
    for K in sizes.Ks:
        for rung in sizes.rungs:
            runs = {j.run for j in jobs if j.K == K and ladder.rung_of(j, sizes) == rung}
            assert runs == set(range(sizes.runs(rung, K))), (K, rung)
    assert sizes.runs(first, 10) == first.runs == long.runs


def test_the_foot_of_the_ladder_is_the_long_profiles_figure2_cell():
    """Same keys, so the five recorded runs of Figure 2 (ReGLU, and ReLU beside it) are the first
    rung's; the rungs above train with the fastest step revision, which their keys name."""
    jobs = ladder.ladder_jobs(get_profile("long"))
    fig2 = set(sweep("fig2", "long", Ks=[50], ns=[50_000], methods=["mlp-reglu", "mlp-relu", "oracle-rfm", "oracle-laplace"]))
    foot = {j for j in jobs if j.K == 50 and j.n == 50_000 and (not j.method.startswith("mlp-") or j.spec.width == 1_024)}
    assert foot == fig2
    above = [j for j in jobs if j.method.startswith("mlp-") and j.spec.width > 1_024]
    assert above and all(j.spec.step_revision == FASTEST_STEP_REVISION for j in above)
    regime = set(sweep("regime", "long", Ks=[50], ns=[200_000], methods=["oracle-rfm"]))
    assert regime <= set(jobs)
    # run 0 of every rung comes before any further run
    runs = [j.run for j in jobs if j.method.startswith("mlp-") and j.K == 50]
    assert runs == sorted(runs)


@pytest.mark.slow
def test_the_smoke_ladder_runs_and_reports_how_every_network_stopped(smoke_ladder):
    records, _ = smoke_ladder
    frame = ladder.ladder_frame(records, "smoke")
    sizes = ladder.ladder_sizes("smoke")
    assert len(frame) == len(sizes.rungs) + sum(r.relu for r in sizes.rungs)
    stops = frame[[f"stopped: {s}" for s in ladder.STOP_REASONS]].sum(axis=1)
    assert (stops == frame["runs"]).all()
    assert (frame["MLP / oracle"] > 0).all()
    frame_capped = frame[ladder.under_trained(frame)]
    assert (frame_capped["stopped: cap"] > 0).all()
    fig = ladder.plot_ladder(records, "smoke")
    assert len(fig.axes) == len(sizes.Ks)
    verdicts = ladder.rung_verdicts(records, "smoke", K=10)
    assert [r for r, _ in verdicts] == list(sizes.rungs)
    # one run per rung: the most a rung can show is "indicated", a negative result is "not settled"
    assert all(c.runs == 1 and c.status in ("indicated", "not settled") for _, c in verdicts)


def test_a_rung_rejects_a_bad_knob_or_size():
    with pytest.raises(ValueError, match="knob"):
        ladder.Rung("depth", 64, 64, 500)
    with pytest.raises((ValueError, TypeError), match="width"):
        ladder.Rung("width", 0, 64, 500)
    with pytest.raises((ValueError, TypeError), match="control_runs"):
        ladder.Rung("width", 64, 64, 500, control_runs=0)
    assert dataclasses.replace(ladder.Rung("n", 64, 64, 500), n=1_000).label.endswith("1\u202f000")


@pytest.mark.slow
def test_a_gap_cell_scores_the_network_and_both_oracles_cluster_by_cluster(smoke_ladder):
    """Its network is the ladder cell's (the same test MSE), its oracles the oracle cells' (the
    same overall test MSE), and the per-link table adds the clusters up."""
    records, gaps = smoke_ladder
    assert len(gaps) == sum(j.method.startswith("mlp-") for j in records)
    for job, rec in gaps.items():
        net = next(r for j, r in records.items() if j.method == f"mlp-{job.spec.network.activation}" and j.spec == job.spec.network
                   and j.data == job.data)
        assert rec["metrics"]["test_mse"] == pytest.approx(net["metrics"]["test_mse"], rel=1e-9)
        rfm = next(r for j, r in records.items() if j.method == "oracle-rfm" and j.data == job.data)
        assert rec["metrics"]["oracle_rfm_test_mse_by_iteration"] == pytest.approx(rfm["metrics"]["test_mse_by_iteration"], rel=1e-9)
        assert sum(rec["metrics"]["units_by_cluster"]) == rec["metrics"]["n_active"]
    frame = ladder.gap_frame(gaps)
    by_link = ladder.gap_by_link(frame)
    assert set(by_link["link"]) <= {"he2", "sin", "tanh"}
    for _, g in by_link.groupby(["K", "network", "width", "batch", "n"]):
        assert g["share of the excess"].sum() == pytest.approx(1.0)
        assert g["clusters"].sum() == 10


def test_the_robust_gap_shows_a_mean_that_rests_on_one_failing_oracle_cluster():
    """Ten clusters where the MLP is 20x the oracle and one where the oracle fails: the ratio of
    means falls to about 2x, the per-cluster median stays 20x, and the failing cluster is named
    with its share of the oracle's error and the ratio without it."""

    rows = [{"K": 11, "network": "reglu", "width": 8, "batch": 8, "n": 100, "run": 0, "cluster": c, "link": "sin",
             "test count": 10, "MLP": 0.02, "oracle": 0.001, "MLP / oracle": 20.0} for c in range(10)]
    rows.append(rows[0] | {"cluster": 10, "link": "he2", "MLP": 0.01, "oracle": 0.1, "MLP / oracle": 0.1})
    r = ladder.gap_robust(pd.DataFrame(rows)).iloc[0]
    assert r["ratio of means"] == pytest.approx((10 * 0.02 + 0.01) / (10 * 0.001 + 0.1))
    assert r["median per-cluster ratio"] == pytest.approx(20.0)
    assert r["oracle's worst cluster"] == "10 (he2, run 0)" and r["clusters with MLP below oracle"] == 1
    assert r["its share of its run's oracle error"] == pytest.approx(0.1 / 0.11)
    assert r["runs with one cluster carrying most of the oracle's error"] == 1
    assert r["ratio of means without each run's worst"] == pytest.approx(20.0)


def test_the_robust_gap_judges_each_run_on_its_own_failing_cluster():
    """Two runs, each with a different cluster where the oracle fails: pooled over the runs
    neither carries most of the oracle's error, but each carries most of its own run's, so both
    runs count, and the ratio without each run's worst cluster is the clean clusters' 20x."""
    rows = []
    for run, bad in ((0, 3), (1, 7)):
        rows += [{"K": 10, "network": "reglu", "width": 8, "batch": 8, "n": 100, "run": run, "cluster": c, "link": "sin",
                  "test count": 10, "MLP": 0.02, "oracle": 0.001, "MLP / oracle": 20.0} for c in range(10) if c != bad]
        rows.append({"K": 10, "network": "reglu", "width": 8, "batch": 8, "n": 100, "run": run, "cluster": bad, "link": "he2",
                     "test count": 10, "MLP": 0.01, "oracle": 0.05 + 0.01 * run, "MLP / oracle": 0.01 / (0.05 + 0.01 * run)})
    frame = pd.DataFrame(rows)
    r = ladder.gap_robust(frame).iloc[0]
    pooled = (frame["oracle"] * frame["test count"]).max() / (frame["oracle"] * frame["test count"]).sum()
    assert pooled < ladder.ONE_CLUSTER_SHARE  # the pooled view would miss both
    assert r["runs with one cluster carrying most of the oracle's error"] == 2
    assert r["oracle's worst cluster"] == "7 (he2, run 1)" and r["its share of its run's oracle error"] == pytest.approx(0.6 / 0.69)
    assert r["ratio of means without each run's worst"] == pytest.approx(20.0)


def test_oracle_failures_count_each_cluster_once_and_name_their_share():
    """Two networks scored on the same data (one run): ten sin clusters at the oracle's usual
    score and one he2 cluster 50x its link's median; the failure is counted once, not per
    network, and carries its share of the oracle's squared error."""
    base = {"K": 12, "width": 8, "batch": 8, "n": 100, "run": 0, "test count": 10, "MLP": 0.01, "MLP / oracle": 10.0}
    rows = []
    for network in ("reglu", "relu"):
        rows += [base | {"network": network, "cluster": c, "link": "sin", "oracle": 0.001} for c in range(10)]
        rows += [base | {"network": network, "cluster": 10 + c, "link": "he2", "oracle": 0.001} for c in range(2)]
        rows[-1] = rows[-1] | {"oracle": 0.05}
    f = ladder.oracle_failures(pd.DataFrame(rows)).set_index("link")
    assert f.loc["he2", "(cluster, run) pairs"] == 2 and f.loc["he2", "oracle fails"] == 0  # median of two: 0.0255, 2x
    rows = [r | {"oracle": 0.05} if r["cluster"] == 11 else r for r in rows]
    rows += [base | {"network": n, "cluster": 12, "link": "he2", "oracle": 0.001} for n in ("reglu", "relu")]
    f = ladder.oracle_failures(pd.DataFrame(rows)).set_index("link")
    assert f.loc["he2", "(cluster, run) pairs"] == 3 and f.loc["he2", "oracle fails"] == 1 and f.loc["sin", "oracle fails"] == 0
    assert f.loc["he2", "share of the oracle's error on failed clusters"] == pytest.approx(0.05 / (12 * 0.001 + 0.05))
    text = ladder.oracle_failure_reading(ladder.oracle_failures(pd.DataFrame(rows))).replace("\u202f", " ")
    assert "at n = 100 (1 run) on 1 of 3 he2 and 0 of 10 sin clusters, which carry 81 % of its squared error there" in text
    assert ladder.oracle_failure_reading(pd.DataFrame()) == "not recorded yet"


def test_the_robust_reading_names_the_rungs_a_failing_oracle_cluster_flatters():
    """Two rungs: on the first one oracle cluster carries 80 % of a run's oracle error and the
    ratio of means is a fifth of the median cluster's; the second is clean and has the lowest median."""
    sizes = ladder.ladder_sizes("long")
    (a, b) = sizes.rungs[2], sizes.rungs[5]
    row = {"K": 50, "network": "reglu", "runs": 1, "oracle's worst cluster": "17 (he2, run 0)"}
    robust = pd.DataFrame([row | {"width": a.width, "batch": a.batch, "n": a.n, "median per-cluster ratio": 15.0,
                                  "ratio of means": 3.0, "its share of its run's oracle error": 0.8,
                                  "runs with one cluster carrying most of the oracle's error": 1},
                           row | {"width": b.width, "batch": b.batch, "n": b.n, "median per-cluster ratio": 6.0,
                                  "ratio of means": 7.0, "its share of its run's oracle error": 0.03,
                                  "runs with one cluster carrying most of the oracle's error": 0}])
    text = ladder.robust_reading(robust, sizes).replace("\u202f", " ")
    assert f"{a.label.replace(chr(0x202f), ' ')}: 15\u00d7 against 3\u00d7 (1 run)" in text
    assert ("On 1 of these 2 rungs one cluster carries most of a run's oracle squared error, in 1 of the rung's runs "
            "(the largest share per rung 80 %; cluster 17 (he2, run 0))") in text
    assert "the ratio of means there is 5\u00d7 below" in text
    assert text.endswith(f"The lowest median: 6\u00d7 at {b.label.replace(chr(0x202f), ' ')} (1 run).")
    assert ladder.robust_reading(robust[robust["network"] == "relu"], sizes) == "not recorded yet"


@pytest.mark.slow
def test_the_page_numbers_come_from_the_records(smoke_ladder):
    records, gaps = smoke_ladder
    numbers = ladder.ladder_numbers(records, gaps, "smoke")
    total = len(ladder.ladder_jobs(get_profile("smoke")))
    assert numbers["ld_recorded"] == f"{total} of {total}"
    assert numbers["ld_paper_verdict"].split(":")[0] in ("indicated (1 run)", "not settled")
    assert "1 run" in numbers["ld_paper_scale"] and "not recorded" not in numbers["ld_steps"]
    assert "of the excess" in numbers["ld_gap"] and "median cluster" in numbers["ld_gap_robust"]
    assert numbers["ld_gap_ladder"].startswith("Cluster by cluster, rung by rung")
    assert "stop at A.2's cap" in numbers["ld_paper_cap"]
    empty = ladder.ladder_numbers({}, {}, "smoke")
    assert empty["ld_recorded"] == f"0 of {total}" and empty["ld_paper_verdict"].startswith("not computed")
    assert empty["ld_gap"] == empty["ld_gap_robust"] == empty["ld_gap_ladder"] == empty["ld_oracle_fail"] == "not recorded yet" and "not recorded" in empty["ld_paper_cap"]


def test_a_rung_with_one_of_its_networks_recorded_says_which_is_missing(smoke_ladder):
    records, gaps = smoke_ladder
    sizes = ladder.ladder_sizes("smoke")
    paper = next(r for r in sizes.rungs if r.knob == "batch")
    # the paper's rung with its ReLU network only: its verdict is the best of fewer networks
    partial = {j: r for j, r in records.items() if not (j.method == "mlp-reglu" and ladder.rung_of(j, sizes) == paper)}
    numbers = ladder.ladder_numbers(partial, gaps, "smoke")
    assert "best recorded MLP (relu) is" in numbers["ld_paper_verdict"] and "reglu not recorded yet" in numbers["ld_paper_verdict"]
    assert f"{paper.label}: " in numbers["ld_steps"] and "reglu not recorded yet" in numbers["ld_steps"]
    row = next(c for c in ladder.ladder_claims(partial, "04_sample_efficiency", "smoke") if f"batch {paper.batch}," in c.scale)
    assert "reglu not recorded yet" in row.evidence
    assert "not recorded yet" not in ladder.ladder_numbers(records, gaps, "smoke")["ld_paper_verdict"]


def test_the_paper_verdict_says_which_runs_chose_the_better_network(smoke_ladder):
    records, gaps = smoke_ladder
    sizes = ladder.ladder_sizes("smoke")
    paper = next(r for r in sizes.rungs if r.knob == "batch")
    # a second run of the paper rung's ReGLU network and of the oracles at its n (copies of run 0)
    def again(job):
        return dataclasses.replace(job, data=dataclasses.replace(job.data, run=1))
    more = {again(j): r for j, r in records.items()
            if j.run == 0 and ((j.method == "mlp-reglu" and ladder.rung_of(j, sizes) == paper)
                               or (j.method in ladder.ORACLES and j.n == paper.n))}
    verdict = ladder.ladder_numbers(records | more, gaps, "smoke")["ld_paper_verdict"]
    assert "is chosen on the 1 run both networks share" in verdict
    # the other network's ratio, over its own runs: ReGLU's two if ReLU is the better on run 0
    assert ("relu, is chosen" in verdict and "reglu is " in verdict and "over its own 2 runs" in verdict) or \
        ("reglu, is chosen" in verdict and "relu is " in verdict and "over its own 1 run)" in verdict)
    assert "chosen on" not in ladder.ladder_numbers(records, gaps, "smoke")["ld_paper_verdict"]


@pytest.mark.slow
def test_every_rung_above_the_foot_is_a_claim_row_with_its_scale(smoke_ladder):
    records, _ = smoke_ladder
    rows = ladder.ladder_claims(records, "04_sample_efficiency", "smoke")
    sizes = ladder.ladder_sizes("smoke")
    assert len(rows) == len(sizes.rungs) - 1
    for row, rung in zip(rows, sizes.rungs[1:]):
        assert f"width {rung.width}" in row.scale and f"batch {rung.batch}" in row.scale and "1 run" in row.scale


def test_the_ladder_reading_follows_each_network_knob_by_knob():
    """Along ReGLU, every knob from the rung before it; ReLU on its own rungs; the batch step's
    updates; the lowest ratio; and the rungs with fewer than five runs say they show a direction."""

    sizes = ladder.ladder_sizes("long")
    K = sizes.Ks[0]
    ratios = {0: 8.0, 1: 4.0, 2: 3.0, 3: 12.0}
    rows = [{"K": K, "rung": i, "network": "reglu", "runs": 5 if i == 0 else 1, "MLP / oracle": r, "batch": sizes.rungs[i].batch,
             "updates": 100_000 if i == 2 else 50_000, "stopped: target": 1} for i, r in ratios.items()]
    rows.append({"K": K, "rung": 0, "network": "relu", "runs": 5, "MLP / oracle": 11.0, "batch": sizes.rungs[0].batch,
                 "updates": 200_000, "stopped: target": 0})
    text = ladder.ladder_reading(pd.DataFrame(rows), sizes, K).replace("\u202f", " ")
    assert "8.0× (5 runs) → 4.0× (1 run) → 3.0× (1 run)" in text  # width, from the foot
    assert "3.0× (1 run) → 12.0× (1 run)" in text  # batch, from the widest batch-1 024 rung
    assert "12.0× (1 run) → not recorded yet → not recorded yet" in text  # n, from the paper's network
    assert "ReLU: 11.0× (5 runs) at 1 024 × 1 024" in text
    assert "stops after 50 000 updates" in text and "against 100 000 at batch 1 024" in text
    assert "The lowest so far: ReGLU at 4 096 × 1 024, n = 50 000, 3.0× (1 run)" in text
    assert "3 of the recorded rungs have fewer than 5 runs" in text
    assert ladder.ladder_reading(pd.DataFrame(), sizes, K).startswith("no ladder network")


@pytest.mark.slow
def test_the_run_reading_puts_one_run_of_every_rung_side_by_side(smoke_ladder):
    """Run 0 on every rung, each network's own path, with the ratio its verdict pairs for that run."""
    records, _ = smoke_ladder
    sizes = ladder.ladder_sizes("smoke")
    for K in sizes.Ks:
        text = ladder.run_reading(records, "smoke", K)
        within = []
        for network, name in (("reglu", "ReGLU"), ("relu", "ReLU")):
            path = ladder.rung_verdicts(records, "smoke", K, network=f"mlp-{network}")
            assert path, (K, network)
            assert f"{name} " + " \u2192 ".join(f"{dict(c.ratios)[0]:.2f}\u00d7 at {rung.label}" for rung, c in path) in text
            within += [rung for rung, c in path if dict(c.ratios)[0] <= ladder.ORACLE_FACTOR]
        assert text.endswith("on that run: none.") == (not within)
    assert ladder.run_reading(records, "smoke", sizes.Ks[0], run=99).startswith("no ladder network has run 99")


def test_ready_gap_cells_are_those_of_finished_networks_and_the_foot_on_request(tmp_path):
    from monosem.experiments.cache import ResultCache

    P = get_profile("smoke")
    sizes = ladder.ladder_sizes(P)
    cache = ResultCache(tmp_path)
    networks = [j for j in ladder.ladder_jobs(P) if j.method.startswith("mlp-")]
    above = next(j for j in networks if ladder.rung_of(j, sizes) != sizes.rungs[0])
    cache.save(above, {"test_mse": 0.5}, 1.0)
    # a foot network's result (restored from its recorded cell: no weights) does not make its
    # gap cell ready without the foot: scoring it would retrain the network
    at_foot = [j for j in networks if ladder.rung_of(j, sizes) == sizes.rungs[0]]
    cache.save(at_foot[0], {"test_mse": 0.5}, 1.0)
    mine = ladder.ready_gap_jobs(P, cache, foot=False)
    assert [ladder.gap_job(above)] == mine
    with_foot = ladder.ready_gap_jobs(P, cache)
    foot = [ladder.gap_job(j) for j in at_foot]
    assert set(with_foot) == set(mine) | set(foot) and foot
    cache.save(mine[0], {"test_mse": 0.5}, 1.0)  # scored: no longer ready
    assert ladder.ready_gap_jobs(P, cache, foot=False) == []


def test_the_control_sentence_says_whether_the_foot_is_within_the_factor_from_its_numbers():
    sizes = ladder.ladder_sizes("long")
    K = sizes.Ks[-1]

    def foot(*ratios):
        return pd.DataFrame([{"K": K, "rung": 0, "network": net, "MLP / oracle": x, "runs": 5}
                             for net, x in zip(("reglu", "relu"), ratios)])

    text = ladder._control_words(foot(0.385, 1.104), sizes)
    assert "are within finding 1b's 2\u00d7" in text and "ReGLU 0.39\u00d7 over 5 runs; ReLU 1.10\u00d7" in text
    assert "are not all within" in ladder._control_words(foot(0.385, 2.5), sizes)
    assert "not recorded yet" in ladder._control_words(pd.DataFrame(), sizes)
    assert ladder._control_words(foot(0.5), ladder.ladder_sizes("smoke")).startswith("no control")


def test_gap_cells_are_the_question_ks_networks_only():
    """One gap cell per ladder network at the question's K (the page's), none at the control K."""
    sizes = ladder.ladder_sizes("long")
    networks = [j for j in ladder.ladder_jobs(get_profile("long")) if j.method.startswith("mlp-")]
    assert {j.K for j in networks} == set(sizes.Ks) and len(sizes.Ks) > 1
    assert ladder.gap_jobs(get_profile("long")) == [ladder.gap_job(j) for j in networks if j.K == sizes.Ks[0]]


def test_the_paper_cap_sentence_counts_every_n_of_the_paper_network_in_the_records():
    """Whether A.2's own cap binds is read over every recorded rung of the paper's network (each
    n), and it says "binds" exactly where one of them stopped at the cap."""
    from monosem.experiments.recorded import load_recorded_cells

    records = load_recorded_cells(sweep("ladder", "long"), "long")
    sizes = ladder.ladder_sizes("long")
    frame = ladder.ladder_frame(records, "long")
    paper = next(r for r in sizes.rungs if r.knob == "batch")
    rows = frame[(frame["K"] == sizes.Ks[0]) & (frame["width"] == paper.width) & (frame["batch"] == paper.batch)]
    text = ladder.ladder_numbers(records, {}, "long")["ld_paper_cap"]
    if rows.empty:
        assert "not known yet" in text
        return
    for n, at_n in rows.groupby("n"):
        counts = " and ".join(f"{int(r['stopped: cap'])} of {int(r['runs'])} {r['network']}" for _, r in at_n.iterrows())
        assert f"at n = {thousands(int(n))}, {counts}" in text
    assert ("the paper's cap binds" in text) == bool(rows["stopped: cap"].sum())


def test_the_ladder_figure_draws_a_band_exactly_where_a_rung_has_the_rules_runs():
    """A band (the runs' range) for every network and rung with at least MIN_RUNS recorded runs,
    none where a rung has fewer: one run cannot show a spread."""
    from matplotlib.collections import PolyCollection

    from monosem.experiments.recorded import load_recorded_cells
    from monosem.experiments.verdicts import MIN_RUNS

    records = load_recorded_cells(sweep("ladder", "long"), "long")
    frame = ladder.ladder_frame(records, "long")
    fig = ladder.plot_ladder(records, "long")
    for ax, K in zip(fig.axes, ladder.ladder_sizes("long").Ks):
        bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
        expected = frame[(frame["K"] == K) & (frame["runs"] >= MIN_RUNS)] if not frame.empty else frame
        assert len(bands) == len(expected)
