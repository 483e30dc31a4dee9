"""Aggregating cells over runs."""

from __future__ import annotations

import pytest
from _toy_jobs import _jobs, toy_compute

from monosem.experiments.cache import ResultCache
from monosem.experiments.results import aggregate
from monosem.experiments.runner import run_jobs


def test_aggregate_mean_and_std(tmp_path):
    rec = run_jobs(_jobs(), toy_compute, ResultCache(tmp_path), progress=False)
    cells = aggregate(rec)
    cell = next(c for c in cells if c.K == 2 and c.n == 10)
    assert cell.runs == 2 and cell.mean == pytest.approx(1 / 20 + 5e-4)
    assert cell.std == pytest.approx((2 * (5e-4) ** 2) ** 0.5)
