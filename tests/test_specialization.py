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
    from monosem.experiments.questions.figure1.table import figure1_frame

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


def _net(activation: str, rows: list[torch.Tensor]) -> MLP:
    """A network whose first-layer rows are ``rows`` and whose readout weighs every neuron alike."""
    net = MLP(D, len(rows), activation)
    with torch.no_grad():
        net.W.copy_(torch.stack(rows).float())
        net.b.zero_()
        net.a.fill_(1.0)
    return net


def test_the_neuron_figures_of_page_03_draw_what_qualifies():
    import types

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from monosem.experiments.questions.figure1 import table as fig1

    aligned = _net("gelu", [e(K + 1), e(K + 4), e(2)])  # two A = 1 neurons, one routing neuron
    fig = fig1.gelu_neurons_figure(aligned)
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert titles == ["neuron 0: A=1.00, c=2", "neuron 1: A=1.00, c=5"] and fig.axes[0].get_xlabel() == "coordinate"
    assert fig1.gelu_neurons_figure(_net("gelu", [e(2), e(3)])) is None
    # A = 0.6 (unit norm: 0.36 + 16 x 0.04), D = 3: a moderate cosine, a dominant predictive coordinate (Figure 5)
    moderate = 0.6 * e(K) + 0.2 * sum(e(k) for k in [*range(K), *range(2 * K, 2 * K + 6)])
    runs = {"gelu": types.SimpleNamespace(models=[aligned]), "relu": types.SimpleNamespace(models=[_net("relu", [moderate, e(K)])])}
    fig5 = fig1.moderate_neurons_figure(runs)
    assert [ax.get_title() for ax in fig5.axes if ax.get_visible()] == ["relu 0: A=0.60, D=3.0"]
    runs["relu"] = types.SimpleNamespace(models=[_net("relu", [e(K)])])
    assert fig1.moderate_neurons_figure(runs) is None
    plt.close("all")


def test_the_live_tables_of_page_03():
    import dataclasses

    from monosem.experiments.questions.figure1 import base
    from monosem.experiments.questions.figure1 import table as fig1
    from monosem.profiles import get_profile

    P = get_profile("smoke")
    sizes = dataclasses.replace(P.specialization, n_train=512, max_steps_relu=20, max_steps_other=20, eval_every=10, relu_lr_grid=(0.004, 0.016))
    reading = base.FIGURE1_READING.at(sizes)
    data = base.figure1_data(reading)
    runs = {act: base.train_figure1(reading, act, data=data, progress=False) for act in ("relu", "gelu")}
    assert fig1.sizes_text(sizes) == "width 64, n_train 512, batch 256, steps ReLU 20 / others 20, seeds (0,)"
    table = fig1.test_mse_frame(runs)
    assert list(table.index) == [("relu", 0), ("gelu", 0)] and table.loc[("gelu", 0), "test MSE"] == runs["gelu"].test_mse[0]
    search = fig1.relu_search_frame(runs["relu"])
    assert list(search.columns) == [0.004, 0.016] and search.loc[0].min() == runs["relu"].val_mse[0]
    assert fig1.table_note(P).startswith("smoke profile: reduced scale (width 64") and fig1.table_note(P).endswith("in percent")
    timing = fig1.timing_frame(runs)
    assert timing.loc["relu", "networks in the stack"] == 2 and timing.loc["gelu", "steps"] == 20
    assert fig1.paper_profile_text(runs, sizes).startswith("paper profile (width 2\u202f048, batch 2\u202f048, 6 x 40\u202f000 ReLU")
