"""Specialization measures (Appendix A.1) on hand-built weights with known answers."""

import math

import pytest
import torch

from monosem.data import figure1_model
from monosem.models import MLP
from monosem.specialization import active_set, alignment, dominance, importance, specialization_table

K, D = 10, 40
V = figure1_model().directions


def e(k):
    v = torch.zeros(D, dtype=torch.float64)
    v[k] = 1.0
    return v


def test_pure_predictive_neuron_has_A_one_and_D_infinite():
    W = (-3.0 * e(K + 4)).unsqueeze(0)
    A, c = alignment(W, V)
    assert float(A) == pytest.approx(1.0) and int(c) == 4
    assert math.isinf(float(dominance(W, V)))


def test_even_mix_of_two_predictive_directions():
    W = (e(K + 1) - e(K + 7)).unsqueeze(0)
    A, _ = alignment(W, V)
    assert float(A) == pytest.approx(1 / math.sqrt(2))
    assert float(dominance(W, V)) == pytest.approx(1.0)


def test_many_small_coefficients_lower_A_but_not_D():
    # Figure 5's point: one dominant predictive coordinate plus many small ones
    w = 0.25 * torch.ones(D, dtype=torch.float64)
    w[K + 2] = 1.0
    A, _ = alignment(w.unsqueeze(0), V)
    assert float(A) == pytest.approx(1.0 / math.sqrt(1.0 + 39 * 0.0625))
    assert float(A) < 0.71
    assert float(dominance(w.unsqueeze(0), V)) == pytest.approx(4.0)


def test_routing_neuron_is_not_aligned():
    W = (e(3) + 0.1 * e(K + 3)).unsqueeze(0)
    assert float(alignment(W, V)[0]) < 0.2
    assert float(dominance(W, V)) == pytest.approx(0.1)


def test_dominance_needs_axis_directions():
    Vr = torch.nn.functional.normalize(torch.randn(3, 5, dtype=torch.float64), dim=1)
    with pytest.raises(ValueError, match="basis"):
        dominance(torch.randn(2, 5), Vr)


def test_active_set_on_known_importance():
    imp = torch.tensor([1.0, 100.0, 0.05, 50.0, 0.0, 848.95])  # total 1000
    # 99.9 % = 999: 848.95 + 100 + 50 = 998.95 < 999, so the neuron of weight 1 is needed too
    assert active_set(imp).tolist() == [5, 1, 3, 0]
    assert active_set(imp, 0.5).tolist() == [5]
    assert active_set(imp, 1.0).tolist() == [5, 1, 3, 0, 2]
    assert active_set(torch.zeros(3)).numel() == 0
    with pytest.raises(ValueError, match="fraction"):
        active_set(imp, 0.0)


def test_importance_and_table_for_hand_built_gated_net():
    model = MLP(D, 4, "reglu", seed=0)
    with torch.no_grad():
        model.W.zero_()
        model.W[0] = 2 * e(K + 0).float()          # gate 0: pure predictive
        model.W[4] = (e(K + 1) + e(K + 2)).float()  # value 0: even mix, A = 1/sqrt 2 < 0.71
        model.W[1] = e(0).float()                   # gate 1: routing
        model.W[5] = 3 * e(K + 5).float()           # value 1: pure predictive
        model.W[2] = e(1).float(); model.W[6] = e(2).float()
        model.W[3] = e(1).float(); model.W[7] = e(2).float()
        model.a.copy_(torch.tensor([1.0, 1.0, 1e-6, 0.0]))
    imp = importance(model)
    torch.testing.assert_close(imp.cpu(), torch.tensor([2 * math.sqrt(2), 3.0, 1e-6, 0.0], dtype=torch.float64))
    rows = {r.branch: r for r in specialization_table(model, V)}
    gate, value = rows["reglu gate"], rows["reglu value"]
    assert gate.n_active == value.n_active == 2
    assert (gate.frac_A071, gate.frac_A090, gate.frac_D1, gate.frac_D2) == (0.5, 0.5, 0.5, 0.5)
    assert (value.frac_A071, value.frac_A090, value.frac_D1, value.frac_D2) == (0.5, 0.5, 0.5, 0.5)


def test_figure1_frame_reports_mean_and_half_range():
    from monosem.experiments.questions.specialization import figure1_frame

    rows = [{"branch": "relu", "seed": s, "n_active": n, "width": 256, "frac_A071": a, "frac_A090": 0.3, "frac_D1": 0.8, "frac_D2": d,
             "test_mse": 0.01, "lr": 0.004} for s, n, a, d in ((0, 100, 0.5, 0.6), (1, 110, 0.6, 0.4))]
    table = figure1_frame(rows).set_index("branch")
    assert table.loc["ReLU", "A ≥ .71 %"] == "55.0 ± 5.0" and table.loc["ReLU", "D > 2 %"] == "50.0 ± 10.0"
    assert table.loc["ReLU", "paper: active / A ≥ .71 / A ≥ .90 %"] == "29.9 / 45.5 / 33.4"


def test_plot_neuron_weights_draws_one_panel_per_neuron():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from monosem.specialization import plot_neuron_weights

    fig, axes = plt.subplots(1, 2)
    plot_neuron_weights(axes, torch.stack([e(K + 1), e(3)]), K, titles=["a", "b"])
    assert len(axes[0].patches) >= D and axes[1].get_title() == "b"
    plt.close(fig)
