"""Section 3.3's tables on the recorded long run: per training size, both RFM scoring rules, and
the numbers the page's prose quotes."""

from __future__ import annotations

import re

import pytest

from monosem.data import mixed_link_model
from monosem.experiments.questions import gated_metric as gm
from monosem.experiments.questions import learned_gates as lg
from monosem.profiles import get_profile


@pytest.fixture(scope="module")
def long_records():
    return lg.recorded_long(get_profile("long"))


def test_the_tables_cover_every_complete_size_under_both_rules(long_records):
    L = get_profile("long")
    tables = lg.tables_by_size(long_records, L.gates.Ks, L.gates.ns)
    sizes = sorted({n for n, _ in tables})
    assert 20_000 in sizes and set(tables) == {(n, r) for n in sizes for r in ("best", "last")}
    rules = lg.rules_frame(tables)
    assert list(rules.columns) == [f"n = {n}, {r}" for n in sizes for r in ("best", "last")]
    numbers = lg.long_numbers(tables)
    best = tables[(20_000, "best")]
    assert numbers["k2_best_20k"] == f"{best.loc[2, 'gated / global']:.2f}" and numbers["k2_runs_20k"] == int(best.loc[2, "runs"])
    assert int(numbers["big_K_lo_20k"]) <= int(numbers["big_K_hi_20k"])


def test_the_curve_frames_split_the_global_and_the_local_methods(long_records):
    glob, local = lg.curve_frames(long_records)
    assert list(glob.columns) == [*lg.FIGURE4_GLOBAL, "runs"] and list(local.columns) == [*lg.FIGURE4_LOCAL, "runs"]


def test_the_diagnosis_numbers_quote_every_recorded_run(long_records):
    mse, metric = gm.diagnosis_tables(gm.recorded_diagnosis(get_profile("long")))
    numbers = gm.diagnosis_numbers(mse, metric, long_records, K=2, n=20_000)
    runs = sorted(mse.xs((2, 20_000), level=("K", "n")).index.get_level_values("run").unique())
    assert runs and all(numbers[k].count("(run ") == len(runs) for k in ("dg_g0", "dg_g3", "dg_i0", "dg_i3", "dg_mis"))
    assert "not recorded" not in numbers["dg_oracle"] and "not recorded" not in numbers["dg_share_v0"]
    assert list(gm.shown_mse(mse).columns) == [c for c in mse.columns
                                               if c.startswith(("iteration 0", "iteration 3")) or c == "misrouted test points"]
    at_50k = gm.diagnosis_numbers(mse, metric, long_records, K=2, n=50_000, prefix="dg50")
    runs_50k = sorted(mse.xs((2, 50_000), level=("K", "n")).index.get_level_values("run").unique())
    assert set(at_50k) == {k.replace("dg_", "dg50_", 1) for k in numbers}
    assert at_50k["dg50_g0"].count("(run ") == at_50k["dg50_oracle"].count("(run ") == len(runs_50k)
    assert at_50k["dg50_i_over_g3"].count("(run ") == len(runs_50k)
    words = at_50k["dg50_i_apart"]
    apart = [] if words == "no run" else [int(r) for r in words.split(" ", 1)[1].split(", ")]
    ratios = [(float(v), int(r)) for v, r in re.findall(r"([\d.]+) \(run (\d+)\)", at_50k["dg50_i_over_g3"])]
    assert apart == [r for v, r in ratios if not 0.5 <= v <= 2]
    empty = gm.diagnosis_numbers(mse.iloc[:0], metric.iloc[:0], {}, K=2, n=20_000)
    assert set(empty) == set(numbers) and all(v == "not recorded" for v in empty.values())


def test_the_close_call_frame_reads_every_run_and_names_the_closest(long_records):
    frame = lg.close_call_frame(long_records, 2, [20_000])
    runs = frame.loc[20_000]
    assert list(runs.index) == sorted(runs.index) and len(runs) >= 5
    assert runs["gated / global"].tolist() == pytest.approx((runs["gated RFM"] / runs["global RFM"]).tolist())
    assert runs.loc[0, "links"] == ", ".join(mixed_link_model(2, 0).link_names)
    numbers = lg.close_call_numbers(frame)
    closest = int(runs["gated / global"].idxmax())
    assert numbers["cc_run_20k"] == str(closest) and numbers["cc_rfm_20k"] == f"{runs.loc[closest, 'global RFM']:.2g}"
    assert numbers["cc_ahead_20k"] == f"{int((runs['gated / global'] < 1).sum())} of {len(runs)}"


def test_the_links_numbers_say_what_the_frame_shows():
    import pandas as pd

    def frame(rfm):  # runs 0-2 of K = 2: (sin, tanh), (tanh, he2), (he2, he2)
        links = ["sin", "tanh", "tanh", "he2", "he2", "he2"]
        index = pd.MultiIndex.from_product([range(3), range(2)], names=["run", "cluster"])
        return pd.DataFrame({"link": links, "global Laplace": 1.0, "global RFM": rfm}, index=index)

    numbers = lg.links_numbers(frame([0.001, 0.002, 0.004, 0.02, 0.03, 0.03]))
    assert (numbers["lk_ratio"], numbers["lk_one_runs"], numbers["lk_without"], numbers["lk_beside"]) == ("5", "1", "0.001–0.002", "0.004")
    assert numbers["lk_verdict"].startswith("so at this size the he2 cluster carries")
    assert "does not account" in lg.links_numbers(frame([0.001, 0.005, 0.004, 0.002, 0.03, 0.03]))["lk_verdict"]


def test_the_links_frame_scores_each_cluster_on_its_own_test_points():
    frame = lg.links_frame(2, 300, 128, [0, 1], progress=False)
    assert list(frame.index) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert frame.loc[1, "link"].tolist() == list(mixed_link_model(2, 1).link_names)
    assert (frame[["global Laplace", "global RFM"]] > 0).all().all()
