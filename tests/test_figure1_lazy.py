"""Page 03's live ablations of the initialization: the lazy regime and the small initialization."""

import dataclasses

import pytest

from monosem.experiments.questions.figure1 import base, lazy
from monosem.models import MLP
from monosem.profiles import get_profile

#: the smoke profile's Figure 1 sizes, cut further: a few updates on a small training set
TINY = dataclasses.replace(get_profile("smoke").specialization, n_train=512, max_steps_relu=20, max_steps_other=20, eval_every=10,
                           lazy_output_scales=(10.0, 100.0))


def test_an_untrained_network_has_not_moved():
    assert lazy.relative_movement(MLP(40, 16, "relu", seed=3)) == pytest.approx(0.0, abs=1e-6)  # float32 weights


def test_the_lazy_ablation_moves_the_first_layer_less_as_alpha_grows():
    data = base.figure1_data(base.FIGURE1_READING.at(TINY))
    reference = lazy.ablation_references(TINY, data=data)
    assert set(reference) == {"relu", "gelu", "reglu"} and all(r.reading == "zero readout" for r in reference.values())
    ablation = lazy.lazy_ablation(TINY, reference, data=data)
    assert [(r.activation, r.alpha) for r in ablation] == [(a, s) for a in ("relu", "gelu") for s in (1.0, 10.0, 100.0)]
    assert ablation[0].model is reference["relu"].models[0]
    table = lazy.lazy_ablation_frame(ablation)
    moved = table["moved ‖W−W₀‖/‖W₀‖"]
    assert moved.loc[("relu", 1.0)] > moved.loc[("relu", 10.0)] > moved.loc[("relu", 100.0)] > 0
    assert list(table.columns) == ["moved ‖W−W₀‖/‖W₀‖", "test MSE", "active", "A ≥ .71 %", "A ≥ .90 %", "D > 2 %"]
    numbers = lazy.regime_numbers(ablation)
    assert list(numbers) == ["rich_moved", "rich_mse", "rich_a71", "lazy_moved", "lazy_mse", "lazy_a71"]
    assert numbers["lazy_moved"] == f"{100 * moved.loc[('relu', 100.0)]:.0f} %"
    small = lazy.small_init_runs(TINY, data=data)
    assert set(small) == {"relu", "reglu"} and small["relu"].hidden_scale == TINY.small_init_scale
    table = lazy.small_init_frame(reference, small)
    assert list(table.index) == [("relu", "× 1"), ("relu", "× 0.1"), ("reglu gate", "× 1"), ("reglu value", "× 1"),
                                 ("reglu gate", "× 0.1"), ("reglu value", "× 0.1")]
    assert table.loc[("relu", "× 1"), "test MSE"] == pytest.approx(reference["relu"].test_mse[0])
