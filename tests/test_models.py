"""The four MLP architectures: shapes, gradients, stacking and argument checks."""

import pytest
import torch

from monosem.device import get_device
from monosem.models import ACTIVATIONS, MLP, MLPStack

#: where the models live (a GPU under MONOSEM_DEVICE=cuda): inputs are made there too
DEV = get_device()


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_forward_shapes_and_gradients(activation):
    torch.manual_seed(0)
    model = MLP(7, 5, activation, seed=3)
    with torch.no_grad():
        model.a.normal_()  # the readout starts at zero, which would zero every hidden gradient
    x = torch.randn(11, 7).to(DEV)
    out = model(x)
    assert out.shape == (11,)
    out.pow(2).sum().backward()
    for name in ("W", "b", "a", "a0"):
        g = getattr(model, name).grad
        assert g is not None and torch.isfinite(g).all() and g.abs().sum() > 0, name
    H = 10 if activation in ("reglu", "swiglu") else 5
    assert model.W.shape == (H, 7) and model.b.shape == (H,) and model.a.shape == (5,)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_initialization_zero_readout_and_default_hidden_scale(activation):
    model = MLP(40, 64, activation, seed=1)
    assert torch.equal(model.a.cpu(), torch.zeros(64)) and float(model.a0.detach()) == 0.0
    assert model(torch.randn(3, 40).to(DEV)).abs().max() == 0.0
    bound = 40**-0.5
    assert model.W.abs().max() <= bound and model.W.abs().max() > 0.9 * bound


def test_gated_hidden_is_gate_times_value():
    model = MLP(4, 3, "reglu", seed=0)
    x = torch.randn(6, 4).to(DEV)
    g = torch.relu(x @ model.W[:3].T + model.b[:3])
    v = x @ model.W[3:].T + model.b[3:]
    torch.testing.assert_close(model.hidden(x), g * v)
    assert set(model.branches()) == {"reglu gate", "reglu value"}


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_stack_equals_separate_models(activation):
    seeds = [0, 5, 9]
    stack = MLPStack(6, 4, activation, seeds)
    with torch.no_grad():
        stack.a.normal_()
        stack.a0.normal_()
    x = torch.randn(8, 6).to(DEV)
    out = stack(x)
    for i, m in enumerate(stack.unstack()):
        torch.testing.assert_close(out[i], m(x))
    fresh = MLP(6, 4, activation, seed=5)
    torch.testing.assert_close(stack.W[1], fresh.W)
    again = MLPStack.from_models(stack.unstack())
    torch.testing.assert_close(again(x), out)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"d": 4, "width": 3, "activation": "tanh"}, "activation"),
        ({"d": 4, "width": 0, "activation": "relu"}, "width"),
        ({"d": 0, "width": 3, "activation": "relu"}, "d"),
        ({"d": 4, "width": 3, "activation": "relu", "output_scale": 0.0}, "output_scale"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MLP(**kwargs)


def test_bad_input_shape():
    with pytest.raises(ValueError, match="shape"):
        MLP(4, 3, "relu")(torch.randn(2, 5).to(DEV))


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_bmm_and_loop_kernels_agree(activation):
    fast = MLPStack(6, 5, activation, [0, 1, 2], kernel="bmm")
    slow = MLPStack(6, 5, activation, [0, 1, 2], kernel="loop")
    with torch.no_grad():
        for net in (fast, slow):
            net.a.copy_(torch.linspace(-1, 1, 15).reshape(3, 5))
    x = torch.randn(3, 8, 6).to(DEV)
    torch.testing.assert_close(fast(x), slow(x))
    torch.testing.assert_close(fast(x[0]), slow(x[0]))
    gf = torch.autograd.grad(fast(x).square().sum(), fast.W)[0]
    gs = torch.autograd.grad(slow(x).square().sum(), slow.W)[0]
    torch.testing.assert_close(gf, gs)
    with pytest.raises(ValueError, match="kernel"):
        MLPStack(6, 5, activation, [0], kernel="fast")


def test_default_init_is_unchanged_and_balanced_balances():
    from monosem.models import init_parameters

    p = init_parameters(20, 32, "relu", 5)
    q = init_parameters(20, 32, "relu", 5, init="pytorch")
    assert all(torch.equal(p[k], q[k]) for k in p) and not p["a"].any()
    bal = init_parameters(20, 32, "relu", 5, init="balanced", dtype=torch.float64)
    assert torch.equal(bal["W"], init_parameters(20, 32, "relu", 5, dtype=torch.float64)["W"])  # same hidden rows
    norms = torch.sqrt(bal["W"].square().sum(1) + bal["b"].square())
    torch.testing.assert_close(bal["a"].abs(), norms)
    assert (bal["a"] > 0).any() and (bal["a"] < 0).any()
    g = init_parameters(20, 16, "reglu", 5, init="balanced", dtype=torch.float64)
    rows = torch.sqrt(g["W"].square().sum(1) + g["b"].square())
    torch.testing.assert_close(rows[:16], rows[16:])
    torch.testing.assert_close(g["a"].abs(), rows[:16])
    with pytest.raises(ValueError, match="init='lecun' is not allowed"):
        init_parameters(20, 8, "relu", 0, init="lecun")


def test_balanced_relu_units_stay_balanced_under_gradient_descent():
    """Section 4.1: gradient flow conserves ||(w_j, b_j)||^2 - a_j^2 for ReLU units; small-step
    full-batch gradient descent keeps it near its balanced start, 0."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(256, 6, generator=gen, dtype=torch.float64).to(DEV)
    y = torch.tanh(x[:, 0]) * x[:, 1]
    net = MLP(6, 16, "relu", seed=1, hidden_scale=0.3, init="balanced", dtype=torch.float64)
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    def gap():
        return (net.W.square().sum(1) + net.b.square() - net.a.square()).detach()
    start = (net.W.square().sum(1) + net.b.square()).detach()
    for _ in range(500):
        opt.zero_grad()
        ((net(x) - y) ** 2).mean().backward()
        opt.step()
    moved = ((net.W.square().sum(1) + net.b.square()).detach() - start).abs().max()
    assert moved > 1e-3  # the units did move
    assert gap().abs().max() < 0.01 * moved  # but their balance is conserved to O(lr)


def test_init_travels_with_stacks():
    stack = MLPStack(6, 8, "relu", [1, 2], init="balanced")
    nets = stack.unstack()
    assert all(m.init == "balanced" for m in nets)
    assert MLPStack.from_models(nets).init == "balanced"
    with pytest.raises(ValueError, match="init"):
        MLPStack.from_models([nets[0], MLP(6, 8, "relu", seed=3)])
