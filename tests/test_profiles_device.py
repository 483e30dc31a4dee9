"""Run profiles and the device / seeding helpers."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
import torch

from monosem import device, profiles


def test_five_profiles_and_default():
    assert profiles.PROFILE_NAMES == ("smoke", "cpu", "long", "gpu", "paper")
    assert profiles.get_profile().name == "cpu"
    for name in profiles.PROFILE_NAMES:
        p = profiles.get_profile(name)
        assert p.name == name and profiles.get_profile(p) is p
        assert dataclasses.is_dataclass(p)
        with pytest.raises(dataclasses.FrozenInstanceError):
            p.name = "x"  # type: ignore[misc]
    assert profiles.get_profile("paper").reduced_scale is False
    assert profiles.get_profile("cpu").reduced_scale is True


def test_paper_profile_holds_the_papers_settings():
    p = profiles.get_profile("paper")
    se = p.sample_efficiency
    assert se.ns == (20_000, 50_000, 100_000, 200_000) and se.Ks == (1, 2, 10, 50)
    assert se.n_test == 4_096 and se.runs == 5
    assert p.gates.Ks == (2, 5, 10, 50)


def test_long_profile_keeps_the_papers_protocol_and_sizes():
    """The long profile narrows the networks only: the A.2 protocol, kernel settings and training
    sizes are the paper's."""
    paper, long = profiles.get_profile("paper").sample_efficiency, profiles.get_profile("long").sample_efficiency
    for name in ("min_steps", "max_steps", "eval_every", "patience_evals", "exact_max_n", "agop_samples", "n_test", "Ks"):
        assert getattr(long, name) == getattr(paper, name), name
    assert set(long.ns) <= set(paper.ns) and (long.width, long.batch) == (1_024, 1_024)
    regime = profiles.get_profile("long").regime
    assert regime.Ks == (10, 50) and regime.network_sizes() == ((256, 512), (1_024, 1_024))
    assert all(profiles.get_profile(n).regime is None for n in ("smoke", "cpu", "paper"))


@pytest.mark.parametrize("bad", ["fast", "", "CPU", None, 3])
def test_unknown_profile_lists_valid_ones(bad):
    with pytest.raises(ValueError, match="smoke.*cpu.*long.*paper"):
        profiles.get_profile(bad)


def test_device_choice_and_override(monkeypatch):
    monkeypatch.delenv("MONOSEM_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert device.get_device().type == expected
    monkeypatch.setenv("MONOSEM_DEVICE", "cpu")
    assert device.get_device().type == "cpu"
    assert device.get_device("cpu").type == "cpu"
    with pytest.raises(ValueError, match="device"):
        device.get_device("tpu9")


def test_dtypes(monkeypatch):
    monkeypatch.delenv("MONOSEM_DTYPE", raising=False)
    assert device.default_dtype() == torch.float32
    monkeypatch.setenv("MONOSEM_DTYPE", "float64")
    assert device.default_dtype() == torch.float64
    assert device.resolve_dtype("float32") == torch.float32
    monkeypatch.setenv("MONOSEM_DTYPE", "half")
    with pytest.raises(ValueError, match="MONOSEM_DTYPE"):
        device.default_dtype()


def test_seed_everything_seeds_all_generators():
    device.seed_everything(123)
    a = (random.random(), np.random.rand(), torch.rand(1).item())
    device.seed_everything(123)
    b = (random.random(), np.random.rand(), torch.rand(1).item())
    assert a == b
    with pytest.raises(ValueError, match="seed"):
        device.seed_everything(-1)


def test_torch_generator_is_independent_of_global_state():
    g1 = device.torch_generator(7)
    torch.manual_seed(999)
    g2 = device.torch_generator(7)
    assert torch.equal(torch.randn(5, generator=g1), torch.randn(5, generator=g2))


def test_check_choice_and_check_interval():
    from monosem.checks import check_choice, check_interval

    assert check_choice("a1", "protocol", ("a1", "a2")) == "a1"
    with pytest.raises(ValueError, match=r"protocol='a3' is not allowed; use one of \['a1', 'a2'\]"):
        check_choice("a3", "protocol", ("a1", "a2"))
    with pytest.raises(ValueError, match="is not allowed"):
        check_choice(True, "flag", (1, 0))  # True == 1, but a bool is not the integer choice
    assert check_interval(1.0, "r", 0, 1, closed="right") == 1.0
    for bad in (0.0, 1.5, float("nan"), "0.5", True):
        with pytest.raises(ValueError, match=r"r=.* must lie in \(0, 1\]"):
            check_interval(bad, "r", 0, 1, closed="right")
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\)"):
        check_interval(1, "r", 0, 1, closed="left")


@pytest.mark.parametrize("progress, env, shown", [(True, "", True), (True, "1", False), (True, "true", False), (False, "", False)])
def test_a_progress_bar_is_shown_unless_the_caller_or_the_environment_silences_it(monkeypatch, progress, env, shown):
    from monosem.progress import progress_bar

    monkeypatch.setenv("TQDM_DISABLE", env)
    bar = progress_bar(range(3), progress=progress, desc="x")
    assert bar.disable is not shown  # read before iterating: closing a bar disables it
    assert list(bar) == [0, 1, 2]
