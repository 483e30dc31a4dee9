"""The checker of a build's published claims: every row names its scale, and its verdict is the
one rule's on its per-run numbers (:func:`monosem.experiments.verdicts.claim_problems`).

The build check reads the claims a book build published into the folder BOOK_CLAIMS names
(``make book`` writes them to ``book/executed/claims``) and is skipped when it is not set, so that
an earlier build's claims left in the tree do not fail the unit tests; .ci/run sets it after
building the book at the smoke profile.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from monosem.book import load_claims, publish_claims
from monosem.experiments.verdicts import MIN_RUNS, Claim, Part, claim_problems

CLAIMS = Path(os.environ["BOOK_CLAIMS"]) if os.environ.get("BOOK_CLAIMS") else None


def _rows(folder: Path) -> list[dict]:
    return [row for path in sorted(folder.glob("*.json")) for row in json.loads(path.read_text(encoding="utf-8"))]


@pytest.mark.skipif(CLAIMS is None, reason="BOOK_CLAIMS names no build's claims folder")
def test_every_published_claim_follows_the_one_rule_and_names_its_scale():
    assert CLAIMS.is_dir(), f"no published claims at {CLAIMS}"
    rows = _rows(CLAIMS)
    assert rows, "the build published no claim"
    problems = [p for row in rows for p in claim_problems(row)]
    assert not problems, "\n".join(problems)
    # what the status page loads is what the pages published, every scale field included
    assert len(load_claims(CLAIMS)) == len(rows)


def _claim(values: tuple[float, ...], **scale) -> Claim:
    scale = {"profile": "cpu", "width": 256, "batch": 512, "n": 10_000} | scale
    return Claim.judged("04_x", "a beats b", [Part("K = 50", sum(values) / len(values), values, high=1.0)], "numbers", **scale)


def test_the_checker_passes_rows_that_follow_the_rule(tmp_path, monkeypatch):
    monkeypatch.setenv("MONOSEM_CLAIMS", str(tmp_path))
    exact = Claim.judged("06_x", "a lemma", [Part("checks that fail", 0.0, (), high=0.0, closed=True, exact=True)], "3 of 3",
                         profile="symbolic (SymPy)", width="no network", batch="no network", n="no sample")
    publish_claims("04_x", [_claim((0.5,) * MIN_RUNS), _claim((0.5,)), exact])
    rows = _rows(tmp_path)
    assert [r["verdict"] for r in rows] == ["reproduces", "indicated", "reproduces"]
    assert all(not claim_problems(r) for r in rows)


def test_the_checker_fails_a_reproduces_on_few_runs_and_a_row_without_its_scale(tmp_path, monkeypatch):
    monkeypatch.setenv("MONOSEM_CLAIMS", str(tmp_path))
    publish_claims("04_x", [_claim((0.5,))])
    (row,) = _rows(tmp_path)
    assert any("reproduces on 1 run (needs" in p for p in claim_problems(row | {"verdict": "reproduces"}))
    assert any("but its numbers give 'indicated'" in p for p in claim_problems(row | {"verdict": "reproduces"}))
    assert claim_problems({k: v for k, v in row.items() if k != "width"}) == ["04_x: 'a beats b' (cpu): no width in its scale"]
    assert claim_problems(row | {"batch": None})[0].endswith("no batch in its scale")
    assert claim_problems(row | {"runs": 5}) == ["04_x: 'a beats b' (cpu): says 5 runs, its parts have [1]"]
    # a row that claims a verdict without the numbers to recompute it
    assert claim_problems(row | {"parts": []}) == ["04_x: 'a beats b' (cpu): no per-run numbers to recompute its verdict from"]
    # the per-run numbers are judged again: a run moved past the threshold changes the verdict
    moved = row | {"parts": [row["parts"][0] | {"values": [1.5]}]}
    assert any("its numbers give 'not settled'" in p for p in claim_problems(moved))
