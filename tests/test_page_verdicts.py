"""The verdict rules of pages 01 and 03 (the feature-learning gain and the Figure 1 rows)."""

from __future__ import annotations

from monosem.experiments.questions.feature_learning import gain_claim
from monosem.experiments.questions.specialization import REPRODUCE_PP, figure1_claims, figure1_frame, figure1_row_status
from monosem.specialization import PAPER_FIGURE1


def test_gain_claim_compares_the_largest_K_with_the_smallest_run_by_run():
    shrinks = gain_claim({(1, 0): 4.0, (1, 1): 3.0, (10, 0): 2.0, (50, 0): 1.5, (50, 1): 1.2})
    assert shrinks.status == "reproduces" and shrinks.K == 50 and shrinks.runs == 2
    assert abs(shrinks.mean_ratio - (1.35 / 3.5)) < 1e-12
    grows = gain_claim({(1, 0): 2.0, (50, 0): 3.0})
    assert grows.status == "does not reproduce" and "1 run" in grows.evidence
    split = gain_claim({(1, 0): 2.0, (1, 1): 2.0, (50, 0): 1.0, (50, 1): 3.0})
    assert split.status == "not settled"
    assert gain_claim({(1, 0): 2.0}).status == "not computed"


def _rows(branch, a71, a90, seeds=(0,)):
    return [{"branch": branch, "seed": s, "n_active": 100, "width": 200, "frac_A071": a71[i] / 100,
             "frac_A090": a90[i] / 100, "frac_D1": 0.5, "frac_D2": 0.2, "test_mse": 0.01, "lr": 0.004}
            for i, s in enumerate(seeds)]


def test_figure1_row_is_judged_on_both_cosine_columns():
    paper = PAPER_FIGURE1["relu"]
    near = _rows("relu", [paper[1] + REPRODUCE_PP - 1], [paper[2] - 1])
    assert figure1_row_status(near, paper)[0] == "reproduces"
    far = _rows("relu", [paper[1] + REPRODUCE_PP + 1], [paper[2]])
    assert figure1_row_status(far, paper)[0] == "does not reproduce"
    # the mean misses, one seed lands within: not settled
    mixed = _rows("relu", [paper[1], paper[1] + 3 * REPRODUCE_PP], [paper[2], paper[2]], seeds=(0, 1))
    assert figure1_row_status(mixed, paper)[0] == "not settled"
    assert figure1_row_status([], paper)[0] == "not computed"


def test_figure1_claims_cover_every_row_and_the_frame_every_branch():
    rows = [r for b, p in PAPER_FIGURE1.items() for r in _rows(b, [p[1]], [p[2]])]
    claims = figure1_claims(rows, "03_specialization", "smoke")
    assert [c.verdict for c in claims] == ["reproduces"] * len(PAPER_FIGURE1)
    assert len(figure1_frame(rows)) == len(PAPER_FIGURE1)
