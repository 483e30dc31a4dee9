"""Shared pytest configuration: CPU-friendly defaults for a 2-core machine."""

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
