"""The verdict rules of pages 01 and 03 (the feature-learning gain and the Figure 1 rows)."""

from __future__ import annotations

from monosem.experiments.questions.feature_learning import gain_claim
from monosem.experiments.questions.figure1.table import REPRODUCE_PP, figure1_claims, figure1_frame, figure1_row_status
from monosem.specialization import PAPER_FIGURE1


def test_gain_claim_compares_the_largest_K_with_the_smallest_run_by_run():
    shrinks = gain_claim({(1, 0): 4.0, (1, 1): 3.0, (10, 0): 2.0, (50, 0): 1.5, (50, 1): 1.2})
    # two runs agree: indicated, not more
    assert shrinks.status == "indicated" and shrinks.K == 50 and shrinks.runs == 2
    assert abs(shrinks.mean_ratio - (1.35 / 3.5)) < 1e-12
    five = gain_claim({(K, r): g for r in range(5) for K, g in ((1, 4.0), (50, 1.5 if r < 4 else 5.0))})
    assert five.status == "reproduces" and five.runs == 5
    grows = gain_claim({(1, 0): 2.0, (50, 0): 3.0})
    assert grows.status == "not settled" and "1 run" in grows.evidence and "against" in grows.evidence
    assert gain_claim({(K, r): g for r in range(5) for K, g in ((1, 2.0), (50, 3.0))}).status == "does not reproduce"
    split = gain_claim({(1, 0): 2.0, (1, 1): 2.0, (50, 0): 1.0, (50, 1): 3.0})
    assert split.status == "not settled"
    assert gain_claim({(1, 0): 2.0}).status == "not computed"


def test_page_01s_rows_name_their_scale():
    from monosem.experiments.questions.feature_learning import claims

    live = gain_claim({(1, 0): 4.0, (50, 0): 1.5}, n=2_500)
    (row,) = claims(live, {}, "01_x", "cpu", 3)
    assert (row.profile, row.width, row.n, row.runs, row.label) == ("cpu", "no network", 2_500, 1, "indicated (1 run)")


def _rows(branch, a71, a90, seeds=(0,)):
    return [{"branch": branch, "seed": s, "n_active": 100, "width": 200, "frac_A071": a71[i] / 100,
             "frac_A090": a90[i] / 100, "frac_D1": 0.5, "frac_D2": 0.2, "test_mse": 0.01, "lr": 0.004}
            for i, s in enumerate(seeds)]


def test_figure1_row_is_judged_on_both_cosine_columns():
    paper = PAPER_FIGURE1["relu"]
    seeds = tuple(range(5))
    near = _rows("relu", [paper[1] + REPRODUCE_PP - 1] * 5, [paper[2] - 1] * 5, seeds)
    assert figure1_row_status(near, paper)[0] == "reproduces"
    assert figure1_row_status(near[:1], paper)[0] == "indicated"  # one seed: the most it can show
    far = _rows("relu", [paper[1] + REPRODUCE_PP + 1] * 5, [paper[2]] * 5, seeds)
    assert figure1_row_status(far, paper)[0] == "does not reproduce"
    status, evidence = figure1_row_status(far[:3], paper)  # a negative result on three seeds
    assert status == "not settled" and evidence.endswith("its seeds say against, on fewer than 5 seeds")
    # the seed means hold but only one seed of three lands within: the seeds are the runs of the rule
    one_of_three = _rows("relu", [paper[1], paper[1] + REPRODUCE_PP + 2, paper[1] - REPRODUCE_PP - 2],
                         [paper[2]] * 3, seeds=(0, 1, 2))
    status, evidence = figure1_row_status(one_of_three, paper)
    assert status == "not settled" and "1 of 3 seeds within" in evidence
    assert figure1_row_status([], paper)[0] == "not computed"


def test_figure1_claims_cover_every_row_and_the_frame_every_branch():
    rows = [r for b, p in PAPER_FIGURE1.items() for r in _rows(b, [p[1]], [p[2]])]
    claims = figure1_claims(rows, "03_specialization", "smoke", 64, 256, 4_000)
    assert [c.label for c in claims] == ["indicated (1 seed)"] * len(PAPER_FIGURE1)
    assert (claims[0].width, claims[0].batch, claims[0].n, claims[0].runs) == (64, 256, 4_000, 1)
    assert len(figure1_frame(rows)) == len(PAPER_FIGURE1)
