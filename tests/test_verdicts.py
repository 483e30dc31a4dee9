"""Verdicts over runs: one scoring rule for every RFM variant, the mean and the paired test."""

from __future__ import annotations

import math

import pytest

from _toy_jobs import cell
from monosem.experiments.questions.sample_efficiency import findings
from monosem.experiments.verdicts import PAIRED_SHARE, combine, compare, per_run, scored


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
    assert c.ratios == ((0, 0.5),) and c.mean_a == 0.5 and c.status == "reproduces"
    assert "1 of 1 run " in c.evidence + " "
    assert compare(_records(table), "x", "a", "c", 2, 100).status == "not computed"
    assert per_run(_records(table), "a", 2, 100) == {0: 0.5, 1: 0.1}


def test_a_claim_at_every_K_combines_its_parts():
    table = {("a", K, 100, 0): _rec(v) for K, v in ((10, 0.5), (50, 1.5))} | {("b", K, 100, 0): _rec(1.0) for K in (10, 50)}
    recs = _records(table)
    parts = [compare(recs, "x", "a", "b", K, 100) for K in (10, 50)]
    assert combine(parts) == "does not reproduce"
    assert combine(parts[:1]) == "reproduces"
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
    from monosem.experiments.verdicts import Claim

    rows = [Claim("04_x", "a claim", "long, n = 1", "reproduces", "0.5x"), Claim("04_x", "b", "cpu", "not settled", "1.1x")]
    assert load_claims(tmp_path / "none").empty  # a build that published nothing
    monkeypatch.setenv("MONOSEM_CLAIMS", str(tmp_path))
    publish_claims("04_x", rows)
    loaded = load_claims(tmp_path)
    assert [Claim(**r) for r in loaded.to_dict("records")] == rows
    box = verdict_box(rows).data
    assert box.startswith(":::{admonition}") and "**not settled**" in box and box.count("\n| ") == 3


def test_finding_1_judges_figure_2s_networks_over_their_runs():
    """Findings 1a and 1b are Figure 2's: the best of ReLU and ReGLU over every run, even where a
    Figure 6 network (one run) has the lower mean."""
    table = {(m, 50, 100, r): _rec(v) for r in range(3) for m, v in (("mlp-relu", 0.4), ("mlp-reglu", 0.3), ("rfm", 1.0),
                                                                     ("oracle-rfm", 0.1))}
    table[("mlp-swiglu", 50, 100, 0)] = _rec(0.01)
    found = findings(_records(table), [50], 100)
    (c1a,), (c1b,) = found.parts["1a"], found.parts["1b"]
    assert (c1a.a, c1a.b, c1a.runs) == ("mlp-reglu", "rfm", 3) and c1a.status == "reproduces"
    assert (c1b.a, c1b.b, c1b.runs) == ("mlp-reglu", "oracle-rfm", 3) and c1b.status == "does not reproduce"


def test_complete_sizes_need_every_method_at_every_K():
    from monosem.experiments.verdicts import complete_sizes

    records = {cell(m, K, n, 0): {} for m in ("a", "b") for K in (2, 10) for n in (100, 200)}
    records.pop(cell("b", 10, 200, 0))
    assert complete_sizes(records, ["a", "b"], [2, 10], [100, 200, 300]) == [100]
    assert complete_sizes(records, ["a"], [2, 10], [100, 200]) == [100, 200]
