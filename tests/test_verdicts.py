"""Verdicts over runs: one scoring rule for every RFM variant, the mean and the paired test."""

from __future__ import annotations

import math

import pytest

from _toy_jobs import cell
from monosem.experiments.questions.sample_efficiency import findings
from monosem.experiments.verdicts import (EQUIVALENCE_MARGIN, MIN_RUNS, PAIRED_SHARE, STATUSES, Part, combine, combine_statuses,
                                          best_of, compare, judge, per_run, scored,
                                          verdict_label)


def _rec(mse, by_iteration=None):
    m = {"test_mse": mse}
    if by_iteration is not None:
        m["test_mse_by_iteration"] = by_iteration
    return {"metrics": m}


def _records(table):
    """{(method, K, n, run): record} -> {Job: record}."""
    return {cell(m, K, n, r): rec for (m, K, n, r), rec in table.items()}


def test_one_rule_scores_every_rfm_variant_alike():
    its = [0.9, 0.2, 0.4, 0.3]
    for method_rec in (_rec(0.2, its), _rec(0.3, its)):  # whatever the cell stored as test_mse
        assert scored(method_rec, "best") == 0.2
        assert scored(method_rec, "last") == 0.3
    assert scored(_rec(0.5), "last") == 0.5  # a cell without iterations is its test MSE
    assert scored({"metrics": {"gate_ari_test": 0.9, "test_mse_by_iteration": its}}, "best", "gate_ari_test") == 0.9
    with pytest.raises(ValueError, match="rule="):
        scored(_rec(0.5), "median")


def test_a_claim_reproduces_only_when_the_mean_and_four_of_five_runs_hold():
    # a / b per run: 0.5, 0.5, 0.5, 0.5, 1.5 -> holds in 4 of 5, and on the means
    table = {("a", 2, 100, r): _rec(0.5 if r < 4 else 1.5) for r in range(5)}
    table |= {("b", 2, 100, r): _rec(1.0) for r in range(5)}
    c = compare(_records(table), "a beats b", "a", "b", 2, 100)
    assert (c.runs, c.wins, c.needed) == (5, 4, math.ceil(PAIRED_SHARE * 5))
    assert c.status == "reproduces" and "holds in 4 of 5 runs" in c.evidence
    # one more run against it: 3 of 5 is not enough either way
    table[("a", 2, 100, 3)] = _rec(1.5)
    c = compare(_records(table), "a beats b", "a", "b", 2, 100)
    assert c.holds_mean and c.wins == 3 and c.status == "not settled"
    # the mean fails and 4 of 5 runs fail: it does not reproduce
    table |= {("a", 2, 100, r): _rec(2.0) for r in range(4)}
    assert compare(_records(table), "a beats b", "a", "b", 2, 100).status == "does not reproduce"


def test_the_paired_test_uses_only_runs_both_methods_ran_and_says_one_run():
    table = {("a", 2, 100, 0): _rec(0.5), ("a", 2, 100, 1): _rec(0.1), ("b", 2, 100, 0): _rec(1.0)}
    c = compare(_records(table), "x", "a", "b", 2, 100)
    # one run holds: the most one run can show is "indicated"
    assert c.ratios == ((0, 0.5),) and c.mean_a == 0.5 and c.status == "indicated"
    assert "1 of 1 run " in c.evidence + " "
    assert compare(_records(table), "x", "a", "c", 2, 100).status == "not computed"
    assert per_run(_records(table), "a", 2, 100) == {0: 0.5, 1: 0.1}


def test_the_best_method_is_chosen_on_the_runs_both_ran():
    # a: runs 0, 1 (mean 1.2 over its own runs); b: run 0 only (1.0). On run 0, the one both
    # ran, a (0.9) beats b
    table = {("a", 2, 100, 0): _rec(0.9), ("a", 2, 100, 1): _rec(1.5), ("b", 2, 100, 0): _rec(1.0)}
    assert best_of(_records(table), ["a", "b"], 2, 100) == "a"
    # no shared run: each mean over its own runs
    table = {("a", 2, 100, 1): _rec(1.5), ("b", 2, 100, 0): _rec(1.0)}
    assert best_of(_records(table), ["a", "b"], 2, 100) == "b"
    assert best_of(_records(table), ["c"], 2, 100) is None


def test_a_claim_at_every_K_combines_its_parts():
    table = {("a", K, 100, 0): _rec(v) for K, v in ((10, 0.5), (50, 1.5))} | {("b", K, 100, 0): _rec(1.0) for K in (10, 50)}
    recs = _records(table)
    parts = [compare(recs, "x", "a", "b", K, 100) for K in (10, 50)]
    # one run against is no more than a sign against: not settled
    assert combine(parts) == "not settled" and "its runs say against, on fewer than 5 runs" in parts[1].evidence
    assert combine(parts[:1]) == "indicated"
    assert combine([]) == "not computed"


def test_findings_pair_the_best_mlp_with_global_rfm_run_by_run():
    table = {}
    for r in range(5):
        table[("mlp-relu", 50, 100, r)] = _rec(0.4)
        table[("mlp-reglu", 50, 100, r)] = _rec(0.15 if r < 4 else 0.6)
        table[("rfm", 50, 100, r)] = _rec(0.5, [0.9, 0.5, 0.7, 0.8])
        table[("oracle-rfm", 50, 100, r)] = _rec(0.3, [0.3, 0.1, 0.2, 0.3])
        table[("oracle-laplace", 50, 100, r)] = _rec(0.3)
    f = findings(_records(table), [50], 100, rule="best")
    (c1a,) = f.parts["1a"]
    assert (c1a.a, c1a.b, c1a.runs, c1a.wins) == ("mlp-reglu", "rfm", 5, 4)
    assert f.status("1a") == "reproduces"
    (c1b,) = f.parts["1b"]
    assert c1b.b == "oracle-rfm" and c1b.mean_b == pytest.approx(0.1)  # scored by the same rule as global RFM
    assert f.status("1b") == "not settled"  # 0.24 / 0.1 on the means, but 4 of 5 runs within 2x
    assert f.status("2") == "reproduces"  # ReGLU beats ReLU on the mean and in 4 of 5 runs
    assert list(f.table().index) == ["1a", "1b", "2"]


def test_published_claims_are_what_the_status_page_loads(tmp_path, monkeypatch):
    from monosem.book import load_claims, publish_claims, verdict_box
    from monosem.experiments.verdicts import Claim, Part

    five = Part("K = 50", 0.5, (0.5, 0.5, 0.5, 0.5, 1.5), high=1.0)
    rows = [Claim.judged("04_x", "a claim", [five], "0.5x", profile="long (recorded)", width=1024, batch=1024, n=20_000),
            Claim.judged("04_x", "b", [Part("K = 2", 0.5, (0.5,), high=1.0)], "0.5x", profile="cpu", width=256, batch=512,
                         n=10_000)]
    assert [c.verdict for c in rows] == ["reproduces", "indicated"] and rows[1].label == "indicated (1 run)"
    assert rows[0].scale == "long (recorded), width 1\u202f024, batch 1\u202f024, n = 20\u202f000, 5 runs"
    assert load_claims(tmp_path / "none").empty  # a build that published nothing
    monkeypatch.setenv("MONOSEM_CLAIMS", str(tmp_path))
    publish_claims("04_x", rows)
    loaded = load_claims(tmp_path)
    assert [Claim.from_json(r) for r in loaded.to_dict("records")] == rows
    assert list(loaded["label"]) == ["reproduces", "indicated (1 run)"]
    box = verdict_box(rows).data
    # the indicated row is set apart from a settled one, and the rule is printed under the table
    assert box.startswith(":::{admonition}") and "**reproduces**" in box and "*indicated (1 run)*" in box
    # one row per claim in the box (header, rule, two claims), every scale's row again in the fold under it
    head, fold = box.split(":::{dropdown}")
    assert head.count("\n| ") == 3 and "negative result" in head and fold.count("\n| ") == 3


def test_finding_1_judges_figure_2s_networks_over_their_runs():
    """Findings 1a and 1b are Figure 2's: the best of ReLU and ReGLU over every run, even where a
    Figure 6 network (one run) has the lower mean."""
    table = {(m, 50, 100, r): _rec(v) for r in range(3) for m, v in (("mlp-relu", 0.4), ("mlp-reglu", 0.3), ("rfm", 1.0),
                                                                     ("oracle-rfm", 0.1))}
    table[("mlp-swiglu", 50, 100, 0)] = _rec(0.01)
    found = findings(_records(table), [50], 100)
    (c1a,), (c1b,) = found.parts["1a"], found.parts["1b"]
    # three runs: indicated at best, and a negative result on three runs is not settled
    assert (c1a.a, c1a.b, c1a.runs) == ("mlp-reglu", "rfm", 3) and c1a.status == "indicated"
    assert (c1b.a, c1b.b, c1b.runs) == ("mlp-reglu", "oracle-rfm", 3) and c1b.status == "not settled"


def test_complete_sizes_need_every_method_at_every_K():
    from monosem.experiments.verdicts import complete_sizes

    records = {cell(m, K, n, 0): {} for m in ("a", "b") for K in (2, 10) for n in (100, 200)}
    records.pop(cell("b", 10, 200, 0))
    assert complete_sizes(records, ["a", "b"], [2, 10], [100, 200, 300]) == [100]
    assert complete_sizes(records, ["a"], [2, 10], [100, 200]) == [100, 200]


def test_the_one_rule_needs_five_runs_either_way():
    assert STATUSES == ("reproduces", "indicated", "not settled", "does not reproduce", "not computed")
    assert MIN_RUNS == 5 and math.ceil(PAIRED_SHARE * MIN_RUNS) == 4
    assert judge(True, [True] * 4 + [False]) == "reproduces"
    assert judge(True, [True] * 3 + [False] * 2) == "not settled"
    # fewer than five runs: the same numbers can at most be indicated ...
    assert judge(True, [True] * 4) == "indicated" and judge(True, [True]) == "indicated"
    assert judge(True, [True, True, False]) == "not settled"  # ... and only when the runs agree as often
    # a negative result needs as many runs; on fewer it is not settled
    assert judge(False, [False] * 5) == "does not reproduce" and judge(False, [False] * 4) == "not settled"
    assert judge(None, []) == "not computed" and judge(True, []) == "not computed"
    assert verdict_label("indicated", 1) == "indicated (1 run)" and verdict_label("indicated", 3, "seed") == "indicated (3 seeds)"
    assert verdict_label("reproduces", 5) == "reproduces"


def test_a_claim_over_parts_takes_its_weakest_part():
    assert combine_statuses(["reproduces", "indicated"]) == "indicated"
    assert combine_statuses(["reproduces", "not settled"]) == "not settled"
    assert combine_statuses(["indicated", "does not reproduce"]) == "does not reproduce"
    assert combine_statuses(["reproduces", "not computed"]) == "not computed"
    exact = Part("checks that fail", 0.0, (), high=0.0, closed=True, exact=True)
    assert exact.status == "reproduces" and Part("x", 1.0, (), high=0.0, closed=True, exact=True).status == "does not reproduce"


def test_similar_holds_inside_the_equivalence_margin_either_way():
    table = {("a", 2, 100, r): _rec(v) for r, v in enumerate((1.1, 0.9, 1.2, 1.0, 2.0))}
    table |= {("b", 2, 100, r): _rec(1.0) for r in range(5)}
    c = compare(_records(table), "similar", "a", "b", 2, 100, threshold=EQUIVALENCE_MARGIN, lower=1 / EQUIVALENCE_MARGIN)
    assert c.wins == 4 and c.holds_mean and c.status == "reproduces" and "within 0.8\u20131.25×" in c.evidence
    table[("a", 2, 100, 1)] = _rec(0.5)  # far below b is not "similar" either
    c = compare(_records(table), "similar", "a", "b", 2, 100, threshold=EQUIVALENCE_MARGIN, lower=1 / EQUIVALENCE_MARGIN)
    assert c.wins == 3 and c.status == "not settled"


def test_figure_6s_claims_are_rows_of_their_own():
    from monosem.experiments.questions.sample_efficiency import claims

    table = {}
    for r in range(5):
        for K in (10, 50):
            for m, v in (("mlp-relu", 0.4), ("mlp-gelu", 0.42), ("mlp-reglu", 0.3), ("mlp-swiglu", 0.2), ("rfm", 1.0),
                         ("oracle-rfm", 0.1)):
                table[(m, K, 100, r)] = _rec(v)
    rows = {c.claim.split(" (")[0]: c for c in claims(findings(_records(table), [10, 50], 100), "04_x", "cpu", 256, 512)}
    assert rows["GELU behaves similarly to ReLU"].verdict == "reproduces"
    swiglu = rows["SwiGLU gives the lowest MLP errors for K = 10 and 50 with sufficient samples"]
    assert swiglu.verdict == "reproduces" and len(swiglu.parts) == 6 and swiglu.n == 100 and swiglu.runs == 5
    # without Figure 6's networks the rows are there, not computed
    bare = {k: v for k, v in table.items() if k[0] not in ("mlp-gelu", "mlp-swiglu")}
    rows = {c.claim.split(" (")[0]: c for c in claims(findings(_records(bare), [10, 50], 100), "04_x", "cpu", 256, 512)}
    assert rows["GELU behaves similarly to ReLU"].verdict == "not computed" and rows["GELU behaves similarly to ReLU"].scale.endswith("no run")
