"""Section 1's page: global RFM against the Laplace kernel per K, its tables, figures and numbers."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

from monosem.experiments.questions import feature_learning as fl
from monosem.profiles import get_profile
from monosem.tables import count

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def smoke():
    sizes = get_profile("smoke").feature_learning
    return sizes, fl.fit_global_rfm(sizes, progress=False)


def test_one_fit_per_K_and_run_with_every_iteration(smoke):
    sizes, fits = smoke
    assert [(f.K, f.run) for f in fits] == [(K, r) for K in sizes.Ks for r in range(sizes.runs)]
    for f in fits:
        assert len(f.mse) == len(f.median_sq) == sizes.iterations + 1 and f.mse == tuple(f.rfm.test_mse_)
    frame = fl.fits_frame(fits)
    assert frame["RFM / Laplace"].tolist() == pytest.approx([f.mse[-1] / f.mse[0] for f in fits])
    assert frame["RFM best"].tolist() == [min(f.mse) for f in fits]


def test_the_gain_table_and_numbers_agree(smoke):
    sizes, fits = smoke
    gains = fl.gain_frame(fits, sizes.Ks).iloc[:, 0]
    means = {K: (np.mean([f.mse[0] for f in fits if f.K == K]), np.mean([f.mse[-1] for f in fits if f.K == K])) for K in sizes.Ks}
    assert gains.tolist() == pytest.approx([means[K][0] / means[K][1] for K in sizes.Ks])
    numbers = fl.live_numbers(fits, sizes.Ks, sizes.n_train)
    assert numbers["gain_K_lo"] == min(sizes.Ks) and numbers["gain_K_hi"] == max(sizes.Ks)
    assert numbers["gain_hi"] == f"{gains[max(sizes.Ks)]:.2g}" and numbers["runs"] == count(sizes.runs, "run")
    metric = fl.metric_frame(fits).groupby(level="K").mean()
    assert numbers["span_lo"] == f"{metric.loc[min(sizes.Ks), 'span captured']:.2f}"
    assert numbers["span_hi"] == f"{metric.loc[max(sizes.Ks), 'span captured']:.2f}"
    assert ("K = 2 is not computed" in numbers["k2_text"]) == (2 not in sizes.Ks)
    ratios = [f.mse[0] / f.median_sq[0] for f in fits]
    assert numbers["tail_laplace"].startswith(f"{min(ratios):.2g}")
    hi = [f for f in fits if f.K == max(sizes.Ks)]
    assert numbers["oracle_hi"] == f"{np.mean([min(f.mse) for f in hi]) / np.mean([f.oracle for f in hi]):.2g}"
    claim = fl.live_claim(fits, sizes.n_train)
    rows = fl.claims(claim, {}, "01_feature_learning", "smoke", sizes.iterations)
    assert len(rows) == 1 and rows[0].verdict == claim.status


def test_the_figures_draw_one_panel_per_K_and_two_for_the_gains(smoke):
    sizes, fits = smoke
    assert len(fl.plot_gains(fits, sizes.Ks, sizes.n_train).axes) == 2
    assert sum(ax.get_visible() for ax in fl.plot_spectra(fits).axes) == len(sizes.Ks)
    assert list(fl.metric_frame(fits).columns) == ["rank [v]", "eff. rank M", "pred. share", "span captured"]


def test_the_recorded_long_run_is_judged_per_training_size():
    verdicts, numbers = fl.recorded_gains("long")
    assert 20_000 in verdicts and all(c.K == 50 for c in verdicts.values())
    assert numbers["long_gain_50"].count("×") == len(numbers["long_ns"].split(" and "))
