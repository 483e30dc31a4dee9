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


def test_a_network_at_the_update_cap_is_marked_in_the_curve_tables():
    """The runs that stopped at A.2's cap are counted per network cell, and the page's table says
    so beside the mean; a kernel or a network that stopped by another rule gets no mark."""
    from monosem.experiments.results import curve_table, with_spread
    from monosem.experiments.sweeps import sweep

    jobs = sweep("fig2", "smoke", Ks=[10], ns=[500], methods=["mlp-relu", "mlp-reglu", "oracle-rfm"])
    reasons = {"mlp-relu": "cap", "mlp-reglu": "target"}
    records = {j: {"metrics": {"test_mse": 0.5, "stop_reason": reasons.get(j.method)} if j.method in reasons
                   else {"test_mse": 0.25}} for j in jobs}
    table = curve_table(records)
    assert table[("mlp-relu", "at cap")].tolist() == [1]
    assert ("mlp-reglu", "at cap") not in table.columns and ("oracle-rfm", "at cap") not in table.columns
    shown = with_spread(table)
    assert shown["mlp-relu"].tolist() == ["0.5 (1 at cap)"] and shown["mlp-reglu"].tolist() == ["0.5"]


def test_a_network_at_the_update_cap_is_ringed_in_the_figure():
    import matplotlib

    matplotlib.use("Agg")
    from monosem.experiments.figures import CAPPED_LABEL, plot_figure
    from monosem.experiments.sweeps import sweep

    jobs = sweep("fig2", "smoke", Ks=[10], ns=[500, 1000], methods=["mlp-relu", "mlp-reglu", "oracle-rfm"])
    records = {j: {"metrics": {"test_mse": 0.5 / j.n * 500, "stop_reason": "cap" if (j.method, j.n) == ("mlp-relu", 1000) else "target"}}
               for j in jobs}
    fig = plot_figure("fig2", "smoke", records=records, Ks=[10])
    rings = [line for ax in fig.axes for line in ax.get_lines() if line.get_label() == CAPPED_LABEL]
    assert len(rings) == 1 and list(rings[0].get_xdata()) == [1000]
    assert CAPPED_LABEL in [t.get_text() for t in fig.legends[0].get_texts()]


def test_mean_over_median_reads_the_tail_against_a_gaussian():
    import numpy as np
    from scipy.stats import chi2

    from monosem.experiments.results import GAUSSIAN_MEAN_OVER_MEDIAN, mean_over_median

    assert GAUSSIAN_MEAN_OVER_MEDIAN == pytest.approx(1 / chi2.ppf(0.5, 1))
    e = np.random.default_rng(0).standard_normal(200_000) ** 2
    assert float(e.mean() / np.median(e)) == pytest.approx(GAUSSIAN_MEAN_OVER_MEDIAN, rel=0.02)
    assert mean_over_median([(6.0, 2.0), (10.0, 1.0)]) == "3\u201310\u00d7" and mean_over_median([(250.0, 1.0)]) == "250\u00d7"
    assert mean_over_median([(4.4, 2.0)]) == "2.2\u00d7" and mean_over_median([(1.0, None)]) == "not computed"
