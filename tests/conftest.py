"""Shared pytest configuration: CPU-friendly defaults for a 2-core machine."""

import functools
import os

os.environ.setdefault("TQDM_DISABLE", "1")
os.environ.setdefault("MONOSEM_PROFILE", "smoke")

import torch  # noqa: E402

torch.set_num_threads(max(1, min(2, torch.get_num_threads())))


import pytest  # noqa: E402

from monosem.data import figure1_model  # noqa: E402
from monosem.train import TrainData  # noqa: E402


@pytest.fixture(scope="module")
def small_data():
    """A small Figure 1 training and validation set (the training-loop tests of MLPs and MoEs)."""
    m = figure1_model()
    x, y, _ = m.sample(600, 11)
    xv, yv, _ = m.sample(200, 12)
    return TrainData(x, y, xv, yv)


class LaplaceFits:
    """The Laplace kernel fits of a test (one per RFM iteration, per cluster of an oracle):
    ``calls`` counts them since the last :meth:`count` or :meth:`interrupt_at`; the ``n``-th after
    ``interrupt_at(n)`` raises ``KeyboardInterrupt``, as a stopped run would."""

    def __init__(self) -> None:
        self.calls, self.die_at = 0, None

    def interrupt_at(self, n: int) -> None:
        self.calls, self.die_at = 0, n

    def count(self) -> None:
        self.calls, self.die_at = 0, None


@pytest.fixture
def laplace_fits(monkeypatch):
    """Counts (and can interrupt) every ``LaplaceKernelRegressor.fit`` of the test."""
    from monosem.kernels import LaplaceKernelRegressor

    fit, fits = LaplaceKernelRegressor.fit, LaplaceFits()

    @functools.wraps(fit)  # its signature stays the fit's (callers inspect it)
    def counted(self, *args, **kwargs):
        fits.calls += 1
        if fits.calls == fits.die_at:
            raise KeyboardInterrupt
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(LaplaceKernelRegressor, "fit", counted)
    return fits
