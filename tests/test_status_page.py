"""The status page's front door (monosem.book): the tally by section over whatever statuses the
verdict rules define, and one folded block per claim."""

from __future__ import annotations

import pandas as pd

from monosem import book
from monosem.experiments import verdicts


def _claims() -> pd.DataFrame:
    rows = [("01_a", "gain shrinks", "cpu", "reproduces", "reproduces", "0.5x"),
            ("01_a", "gain shrinks", "long", "indicated", "indicated (1 run)", "0.9x"),
            ("04_b", "MLP beats RFM", "cpu", "not settled", "not settled", "1.0x"),
            ("04_b", "oracle beats $K$", "cpu", "not computed", "not computed", "no run")]
    return pd.DataFrame(rows, columns=["page", "claim", "scale", "verdict", "label", "evidence"])


def test_the_tally_counts_by_section_over_the_rules_statuses_in_their_order(monkeypatch):
    statuses = ("reproduces", "indicated", "not settled", "does not reproduce", "not computed")
    monkeypatch.setattr(verdicts, "STATUSES", statuses)
    tally = book.status_tally(_claims())
    assert list(tally.columns) == list(statuses)
    assert list(tally.index) == ["01", "04", "all"]
    assert tally.loc["01"].tolist() == [1, 1, 0, 0, 0]
    assert tally.loc["all"].tolist() == [1, 1, 1, 0, 1]


def test_every_claim_is_one_folded_block_with_a_row_per_scale():
    text = book.status_markdown(_claims(), {"01_a": "Feature learning"})
    assert text.count('<details class="monosem-claim">') == 3
    assert "[01](01_a.ipynb) Feature learning" in text
    assert "| long | indicated (1 run) | 0.9x |" in text
    assert "oracle beats \\(K\\)" in text  # math for MathJax inside raw HTML
