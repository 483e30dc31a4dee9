"""The cost model that sizes the gpu profile (monosem.experiments.estimate)."""

import re
from pathlib import Path

import pytest

from monosem.__main__ import main
from monosem.experiments import estimate as budget
from monosem.profiles import get_profile

ROOT = Path(__file__).resolve().parents[1]


def test_update_time_grows_with_the_activations_and_the_stack():
    t = budget.mlp_update_seconds
    for dev in (budget.CPU_THREAD, budget.T4):
        base = t(1024, 1024, 20, "relu", dev)
        assert t(2048, 1024, 20, "relu", dev) > base and t(1024, 2048, 20, "relu", dev) > base
        assert t(1024, 1024, 20, "reglu", dev) > base  # H = 2 x width
        # a stack pays the launches once: M networks cost less than M separate steps (on a GPU)
        assert t(1024, 1024, 20, "relu", dev, stack=8) <= 8 * base
    assert t(1024, 1024, 20, "relu", budget.T4) < t(1024, 1024, 20, "relu", budget.CPU_THREAD) / 5


def test_cpu_calibration_matches_the_docstring():
    """The model's one-thread CPU times are those the module docstring compares with the
    benchmark (0.63 / 5.0 / 20 ms ReLU, 13 ms ReGLU)."""
    t = lambda w, b, a: 1e3 * budget.mlp_update_seconds(w, b, 20, a, budget.CPU_THREAD)  # noqa: E731
    assert [round(t(256, 512, "relu"), 2), round(t(1024, 1024, "relu"), 1), round(t(2048, 2048, "relu"))] == [0.63, 5.0, 20]
    assert round(t(1024, 1024, "reglu")) == 13


def test_kernel_fits_follow_the_recorded_power_law():
    f = budget.kernel_fit_seconds
    for n, seconds in budget.CPU_RFM_SECONDS.items():
        assert f("rfm", n, budget.CPU_THREAD) == pytest.approx(seconds, rel=0.35)
    assert f("laplace", 50_000, budget.CPU_THREAD) < f("rfm", 50_000, budget.CPU_THREAD)
    # per-cluster fits on n / K points are cheaper than one global fit (super-linear cost)
    assert f("rfm", 50_000, budget.CPU_THREAD, clusters=10) < f("rfm", 50_000, budget.CPU_THREAD)
    with pytest.raises(ValueError, match="method"):
        f("svm", 1000, budget.T4)


def test_gpu_profile_fits_a_colab_session_and_paper_does_not():
    for page in budget.pages():
        assert sum(budget.page_seconds(page, "gpu", "t4").values()) <= 50 * 60, page
    assert sum(budget.page_seconds("04_sample_efficiency", "paper", "t4").values()) > 10 * 3600
    with pytest.raises(ValueError, match="page"):
        budget.page_seconds("99_nothing", "gpu", "t4")
    with pytest.raises(ValueError, match="device"):
        budget.page_seconds("04_sample_efficiency", "gpu", "tpu")


def test_gpu_profile_sits_between_long_and_paper():
    gpu, paper, long = (get_profile(p) for p in ("gpu", "paper", "long"))
    assert gpu.specialization == paper.specialization and gpu.feature_learning == paper.feature_learning
    se = gpu.sample_efficiency
    assert (se.width, se.batch) == (long.sample_efficiency.width, long.sample_efficiency.batch)
    for name in ("min_steps", "max_steps", "eval_every", "patience_evals", "exact_max_n", "agop_samples", "n_test"):
        assert getattr(se, name) == getattr(paper.sample_efficiency, name), name


def test_the_estimate_command_prints_the_models_table_and_basis(capsys):
    """The CLI and the reproduce page (which calls estimate_frame at build time) show the model's output."""
    assert main(["estimate", "--profile", "gpu", "--device", "t4"]) == 0
    out = capsys.readouterr().out
    table, basis = (part.strip() for part in out.split("\n", 1)[1].split("\n\n", 1))
    frame = budget.estimate_frame("gpu", "t4")
    assert table == frame.to_string(float_format="{:.0f}".format).strip()
    assert list(frame.index) == budget.pages() and (frame["estimated minutes"] > 0).all()
    # and what the minutes rest on: the measured kernel times and the assumed device constants
    assert basis == budget.estimate_basis("gpu", "t4")
    assert "assumptions, not measurements" in basis and "recorded long run" in basis and "update cap" in basis
    assert "estimate_frame" in (ROOT / "book" / "reproduce.md").read_text()
    with pytest.raises(SystemExit):
        main(["estimate", "--device", "tpu"])
    assert re.search(r"not modelled", capsys.readouterr().err)
