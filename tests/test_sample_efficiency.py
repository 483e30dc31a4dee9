"""Section 3.2's tables: EigenPro solves and stopping."""

from __future__ import annotations

import pytest
from _toy_jobs import cell


def test_eigenpro_solves_are_listed_from_the_cells_that_ran_it():
    import pandas as pd

    from monosem.experiments.results import eigenpro_solves, eigenpro_solves_frame

    ep = {"solver": "eigenpro", "iterations": 129, "train_mse": 3.96e-4, "converged": True, "step_halvings": 4}
    exact = {"solver": "exact", "iterations": 1, "train_mse": 1e-9, "converged": True, "step_halvings": 0}
    records = {
        cell("laplace", 2, 20_000, 0): {"metrics": {"solve": ep, "test_mse": 0.5}},
        cell("rfm", 2, 20_000, 1): {"metrics": {"solves": [ep, dict(ep, converged=False)], "test_mse_by_iteration": [0.2, 0.3]}},
        cell("laplace", 2, 5_000, 0): {"metrics": {"solve": exact}},
        cell("mlp-relu", 2, 20_000, 0): {"metrics": {"test_mse": 1.0}},
        # per-cluster fits: an oracle's Laplace solves, a gated RFM's iterations (gate 1 empty)
        cell("oracle-laplace", 2, 20_000, 0): {"metrics": {"local_solves": [exact, ep], "test_mse": 0.1}},
        cell("gated-rfm", 2, 20_000, 0): {"metrics": {"local_solves": [[ep, exact], None], "test_mse_by_iteration": [0.4, 0.1]}},
    }
    rows = eigenpro_solves(records)
    assert [(r["method"], r["run"], r["cluster"], r["iteration"], r["converged"]) for r in rows] == [
        ("gated-rfm", 0, 0, 0, True), ("laplace", 0, None, None, True), ("oracle-laplace", 0, 1, None, True),
        ("rfm", 1, None, 0, True), ("rfm", 1, None, 1, False)]
    frame = eigenpro_solves_frame(rows)
    assert len(frame) == 5 and frame["epochs"].tolist() == [129] * 5 and frame["step halvings"].tolist() == [4] * 5
    assert frame["reached the target"].tolist() == [True, True, True, True, False]
    assert frame["training MSE"].tolist() == [3.96e-4] * 5 and frame["run"].tolist() == [0, 0, 0, 1, 1]
    assert frame["cluster"].tolist() == [0, pd.NA, 1, pd.NA, pd.NA] and frame["iteration"].tolist() == [0, pd.NA, pd.NA, 0, 1]
    # the cell's test MSE with that fit, and the scoring rules that read it
    assert frame["test MSE with it"].tolist() == [0.4, 0.5, 0.1, 0.2, 0.3]
    assert frame["scored by"].tolist() == ["neither", "best, last", "best, last", "best", "last"]
    empty = eigenpro_solves_frame([])
    assert empty.empty and list(empty.columns) == list(frame.columns)


def test_unreached_solves_are_counted_by_the_rule_that_reads_them():
    import pandas as pd

    from monosem.experiments import results

    ep = {"solver": "eigenpro", "iterations": 200, "train_mse": 0.1, "converged": False, "step_halvings": 11}
    ok = dict(ep, converged=True, train_mse=3e-4, step_halvings=1)
    records = {
        cell("gated-rfm", 2, 50_000, 3): {"metrics": {"local_solves": [[ok, ok, ep, ok]], "test_mse_by_iteration": [1e-3, 6e-4, 0.17, 6e-4]}},
        cell("oracle-rfm", 2, 50_000, 1): {"metrics": {"local_solves": [[ok, ok, ok, dict(ep, step_halvings=5)]],
                                                        "test_mse_by_iteration": [5e-3, 5e-4, 5e-4, 6e-4]}},
        cell("laplace", 2, 50_000, 1): {"metrics": {"solve": ep, "test_mse": 0.1}},  # one fit: both rules read it
    }
    solves = results.eigenpro_solves_frame(results.eigenpro_solves(records))
    frame = results.unreached_solves(solves).reset_index()
    assert frame[["method", "run", "iteration", "scored by"]].values.tolist() == [
        ["gated-rfm", 3, 2, "neither"], ["laplace", 1, pd.NA, "best, last"], ["oracle-rfm", 1, 3, "last"]]
    assert frame["best other iteration"].tolist()[::2] == [6e-4, 5e-4] and pd.isna(frame["best other iteration"][1])
    numbers = results.unreached_numbers(solves)
    assert (numbers["ep_missed"], numbers["ep_solves"], numbers["ep_missed_best"], numbers["ep_missed_last"]) == ("3", "9", "1", "2")
    assert numbers["ep_missed_ns"] == "50\u202f000" and numbers["ep_halvings"] == "5–11"
    assert numbers["ep_worst"] == "0.17 (gated-rfm, K = 2, n = 50\u202f000, run 3, iteration 2; 0.0006 at the best of its other iterations)"
    assert results.unreached_numbers(results.eigenpro_solves_frame([]))["ep_worst"] == "none"


def test_stopping_frame_gives_the_training_mse_in_units_of_the_target():
    from monosem.experiments.questions.sample_efficiency import stopping_frame, stopping_summary


    # a real MLP cell's settings, with the three the table reads changed
    changes = {"width": 64, "max_steps": 1000, "target_mse": 4e-4}
    records = {
        cell("mlp-relu", 2, 500, 0, "smoke", **changes): {"metrics": {"train_mse": 2e-3, "test_mse": 0.1, "stop_step": 1000,
                                                                         "stop_reason": "cap"}},
        cell("mlp-relu", 2, 500, 1, "smoke", **changes): {"metrics": {"train_mse": 3e-4, "test_mse": 0.1, "stop_step": 400}},
        cell("rfm", 2, 500, 0, "smoke"): {"metrics": {"test_mse": 0.2}},
    }
    frame = stopping_frame(stopping_summary(records))
    assert frame["run"].tolist() == [0, 1] and frame["width"].tolist() == [64, 64]
    assert frame["training MSE"].tolist() == [2e-3, 3e-4]
    assert frame["training MSE / target"].tolist() == pytest.approx([5.0, 0.75])
    assert frame["stopped at (updates)"].tolist() == [1000, 400] and frame["stop reason"].tolist() == ["cap", "?"]
    empty = stopping_frame([])
    assert empty.empty and list(empty.columns) == list(frame.columns)


def test_stopping_note_counts_the_capped_cells_and_their_distance_to_the_target():
    from monosem.experiments.questions.sample_efficiency import stopping_note

    rows = [{"K": 2, "reason": "cap", "train_mse": 8e-4, "target": 4e-4},
            {"K": 10, "reason": "cap", "train_mse": 1.2e-3, "target": 4e-4},
            {"K": 50, "reason": "plateau", "train_mse": 2e-3, "target": 4e-4}]
    assert stopping_note(rows) == ("2 of 3 MLP cells stopped at the update cap\n"
                                   "K >= 10: 1 of 2 at the cap, training MSE 3.0\u20135.0× the target")
    assert stopping_note(rows[:1]) == "1 of 1 MLP cells stopped at the update cap"


def test_the_long_runs_findings_are_judged_per_complete_size_under_both_rules():
    from monosem.experiments.questions import sample_efficiency as se
    from monosem.profiles import get_profile

    L = get_profile("long")
    records = se.recorded_long(L)
    found = se.findings_by_size(records, L.sample_efficiency.Ks, L.sample_efficiency.ns)
    sizes = sorted({n for n, _ in found})
    assert 20_000 in sizes and set(found) == {(n, r) for n in sizes for r in ("best", "last")}
    for (n, rule), f in found.items():
        assert f.n == n and f.rule == rule
        assert f.table()["verdict"].tolist() == se.findings(records, L.sample_efficiency.Ks, n, rule).table()["verdict"].tolist()
    rules = se.rules_frame(found)
    assert list(rules.columns) == [f"n = {n}, {r} iteration{'s' if r == 'best' else ''}" for n in sizes for r in ("best", "last")]
    numbers = se.long_numbers(found, records, L.sample_efficiency.Ks)
    c = found[(20_000, "best")].parts["1b"][0]
    assert numbers["f1b_ratio_20k"] == f"{c.mean_ratio:.1f}" and numbers["f1b_runs_20k"] == c.runs
    assert float(numbers["f1b_smallK_lo"]) <= float(numbers["f1b_smallK_hi"]) and numbers["oracle_factor"] == "2"
    assert float(numbers["rfm_smallK_lo"]) <= float(numbers["rfm_smallK_hi"])
    assert "recorded:" in se.recorded_runs_note(records, L)


def test_a_finding_the_profile_leaves_out_at_an_n_is_no_row_there():
    """At the long profile Figure 6's GELU and SwiGLU run at 20 000 only (the profile's cut): at
    50 000 their findings are no rows (not "not computed"), at 20 000 they are; without the
    profile's grid every finding is a row."""
    from monosem.experiments.questions import sample_efficiency as se
    from monosem.profiles import get_profile

    L = get_profile("long").sample_efficiency
    records = se.recorded_long(get_profile("long"))
    at = {n: se.findings(records, L.Ks, n) for n in L.ns}
    rows = {n: [c.claim for c in se.claims(at[n], "04_x", "long (recorded)", L.width, L.batch, L)] for n in L.ns}
    figure6 = {se.CLAIMS["gelu~relu"], se.CLAIMS["swiglu"]}
    assert figure6 <= set(rows[20_000]) and not figure6 & set(rows[50_000])
    assert se.CLAIMS["1b"] in rows[50_000]
    unfiltered = se.claims(at[50_000], "04_x", "long (recorded)", L.width, L.batch)
    assert {c.verdict for c in unfiltered if c.claim in figure6} == {"not computed"}


def test_the_rate_at_the_stop_reads_the_cosine_schedule():
    from monosem.experiments.questions.sample_efficiency import rate_at_stop, recorded_long
    from monosem.profiles import get_profile
    from monosem.train import cosine_lr

    L = get_profile("long")
    se = L.sample_efficiency
    numbers, frame = rate_at_stop(recorded_long(L), se)
    at_min = cosine_lr(se.min_steps, se.max_steps, 1.0, 0.01)
    assert numbers["rate_at_min_steps"] == f"{100 * at_min:.0f}" and numbers["share_at_min_steps"] == f"{at_min:.3f}"
    assert 0 < float(numbers["median_rate_at_stop"]) <= 100
    assert list(frame.columns) == ["stop_step", "rate at the stop / initial"] and frame.index.names == ["method", "K"]


def test_paper_cost_frame_lists_hours_longest_first_and_the_total():
    from monosem.experiments.estimate import paper_cost_frame

    frame = paper_cost_frame({"rfm": 7200.0, "mlp-relu": 36_000.0})
    assert frame.index.tolist() == ["mlp-relu", "rfm", "total"]
    assert frame.iloc[:, 0].tolist() == pytest.approx([10.0, 2.0, 12.0])


def test_the_regime_maps_oracle_ratios_are_per_width():
    from monosem.experiments.questions.regime import RegimeCell, mlp_oracle_ratios

    cell = RegimeCell(50, 100_000, runs=1, mlp={("mlp-relu", 256): {"test_mse": 4.0}, ("mlp-reglu", 256): {"test_mse": 3.0},
                                                ("mlp-relu", 1024): {"test_mse": 2.0}},
                      kernels={"oracle-rfm": 1.0, "oracle-laplace": 1.5})
    assert mlp_oracle_ratios([cell], 50, 100_000) == [3.0, 2.0]
    assert mlp_oracle_ratios([cell], 10, 100_000) == []


def test_the_missing_cells_cost_is_the_other_runs_time_once_per_missing_cell():
    import dataclasses

    from monosem.experiments.estimate import core_seconds
    from monosem.experiments.questions import sample_efficiency as se
    from monosem.profiles import get_profile

    L = get_profile("long")
    records = se.recorded_long(L)
    # drop run 4 of K = 2 at 20 000: its kernel cells cost the mean of runs 0-3 of the same cells
    # (a network's cost, its runs' updates at its measured speed: tests/test_estimate.py)
    dropped = {j for j in records if j.run == 4 and j.K == 2 and j.n == 20_000 and not j.method.startswith("mlp-")}
    assert dropped
    kept = {j: r for j, r in records.items() if j not in dropped}
    base = se.missing_hours(records, L)
    expected = 0.0
    for j in dropped:
        others = [core_seconds(r) for o, r in kept.items()
                  if (o.method, o.spec, dataclasses.replace(o.data, run=0)) == (j.method, j.spec, dataclasses.replace(j.data, run=0))]
        expected += sum(others) / len(others)
    assert se.missing_hours(kept, L) == pytest.approx(base + expected / 3600)


def test_updates_help_counts_the_runs_whose_last_iteration_is_below_the_first():
    from monosem.experiments.questions import learned_gates as lg

    records = {cell("gated-rfm", 2, 20_000, r): {"metrics": {"test_mse_by_iteration": its}}
               for r, its in enumerate(([1.0, 0.5, 0.4, 0.3], [1.0, 2.0, 2.0, 1.5], [1.0, 0.1, 0.1, 0.1]))}
    records[cell("gated-rfm", 2, 50_000, 0)] = {"metrics": {"test_mse_by_iteration": [1.0, 0.5, 0.5, 0.9]}}
    records[cell("gated-rfm", 10, 20_000, 0)] = {"metrics": {"test_mse_by_iteration": [1.0, 2.0, 2.0, 2.0]}}
    assert lg.updates_help(records, "gated-rfm", 2) == "2 of 3 at n = 20\u202f000; 1 of 1 at n = 50\u202f000"
    assert lg.updates_help(records, "oracle-rfm", 2) == "no run recorded"


def test_still_falling_reads_each_capped_networks_last_updates():
    from monosem.experiments.questions.regime import still_falling

    def rec(stop, curve):
        return {"metrics": {"stop_reason": stop, "train_curve": curve}}

    records = {cell("mlp-relu", 50, 100_000, run=0): rec("cap", [[180_000, 2.0], [190_000, 1.5], [200_000, 1.0]]),
               cell("mlp-reglu", 50, 100_000, run=0): rec("cap", [[180_000, 1.0], [200_000, 1.0]]),
               cell("mlp-relu", 50, 100_000, run=1): rec("target", [[20_000, 9.0], [40_000, 1.0]])}
    text = still_falling(records)
    # the one still falling halved over its last 20 000 updates; the flat one and the one at the target do not count
    assert text.startswith("1 of the 2 networks that stop at the cap") and "(by 50.0 %, median 50.0 %" in text
    assert still_falling({}) == "no network of the map stops at the cap"
