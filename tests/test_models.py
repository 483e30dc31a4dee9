"""The four MLP architectures: shapes, gradients, stacking and argument checks."""

import pytest
import torch

from monosem.models import ACTIVATIONS, MLP, MLPStack


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_forward_shapes_and_gradients(activation):
    torch.manual_seed(0)
    model = MLP(7, 5, activation, seed=3)
    with torch.no_grad():
        model.a.normal_()  # the readout starts at zero, which would zero every hidden gradient
    x = torch.randn(11, 7)
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
    assert torch.equal(model.a, torch.zeros(64)) and float(model.a0.detach()) == 0.0
    assert model(torch.randn(3, 40)).abs().max() == 0.0
    bound = 40**-0.5
    assert model.W.abs().max() <= bound and model.W.abs().max() > 0.9 * bound


def test_gated_hidden_is_gate_times_value():
    model = MLP(4, 3, "reglu", seed=0)
    x = torch.randn(6, 4)
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
    x = torch.randn(8, 6)
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
        MLP(4, 3, "relu")(torch.randn(2, 5))


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_bmm_and_loop_kernels_agree(activation):
    fast = MLPStack(6, 5, activation, [0, 1, 2], kernel="bmm")
    slow = MLPStack(6, 5, activation, [0, 1, 2], kernel="loop")
    with torch.no_grad():
        for net in (fast, slow):
            net.a.copy_(torch.linspace(-1, 1, 15).reshape(3, 5))
    x = torch.randn(3, 8, 6)
    torch.testing.assert_close(fast(x), slow(x))
    torch.testing.assert_close(fast(x[0]), slow(x[0]))
    gf = torch.autograd.grad(fast(x).square().sum(), fast.W)[0]
    gs = torch.autograd.grad(slow(x).square().sum(), slow.W)[0]
    torch.testing.assert_close(gf, gs)
    with pytest.raises(ValueError, match="kernel"):
        MLPStack(6, 5, activation, [0], kernel="fast")
