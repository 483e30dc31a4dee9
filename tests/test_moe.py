"""The top-1 mixture of experts (Switch Transformer routing): shapes, the E = 1 identity, routing,
the load-balancing loss, parameter and FLOP accounting, and training with the A.1/A.2 loop."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from monosem.models import (
    ACTIVATIONS,
    AUX_WEIGHT,
    GATED,
    MLP,
    MLPStack,
    MoE,
    MoEStack,
    forward_flops,
    init_moe_parameters,
    init_parameters,
    load_balancing_loss,
    matched_dense_width,
    parameter_count,
)
from monosem.train import TrainConfig, a2_config, mse, train


def _randomize(model, seed=0):
    """Non-zero readouts and a non-trivial router, so that every path is exercised."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name in ("R", "c", "a", "a0"):
            p = getattr(model, name)
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype))
    return model


def _flops(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_shapes(activation):
    d, m, E = 5, 3, 4
    stack = MoEStack(d, m, activation, E, [0, 1], dtype=torch.float64)
    H = 2 * m if activation in GATED else m
    shapes = {"R": (2, E, d), "c": (2, E), "W": (2, E, H, d), "b": (2, E, H), "a": (2, E, m), "a0": (2, E)}
    assert {n: tuple(getattr(stack, n).shape) for n in stack.param_names} == shapes
    x = torch.randn(9, d, dtype=torch.float64)
    assert stack(x).shape == (2, 9) and stack(torch.randn(2, 9, d, dtype=torch.float64)).shape == (2, 9)
    idx = stack.route(x)
    assert idx.shape == (2, 9) and idx.dtype == torch.long and 0 <= int(idx.min()) and int(idx.max()) < E
    assert stack.aux_loss(x).shape == (2,)
    probs = stack.router_probs(x)
    assert probs.shape == (2, 9, E)
    torch.testing.assert_close(probs.sum(-1), torch.ones(2, 9, dtype=torch.float64))
    one = MoE(d, m, activation, E, seed=0, dtype=torch.float64)
    assert one(x).shape == (9,) and one.route(x).shape == (9,) and one.aux_loss(x).shape == ()
    assert stack.aux_weight == AUX_WEIGHT == 0.01


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: MoEStack(5, 3, "tanh", 4, [0]), "activation"),
        (lambda: MoEStack(5, 3, "relu", 0, [0]), "n_experts"),
        (lambda: MoEStack(5, 3, "relu", 2.5, [0]), "n_experts"),
        (lambda: MoEStack(5, 0, "relu", 4, [0]), "width"),
        (lambda: MoEStack(0, 3, "relu", 4, [0]), "d"),
        (lambda: MoEStack(5, 3, "relu", 4, []), "seeds"),
        (lambda: MoEStack(5, 3, "relu", 4, [0], aux_weight=-1.0), "aux_weight"),
        (lambda: MoEStack(5, 3, "relu", 4, [0], router_scale=0.0), "router_scale"),
        (lambda: MoEStack(5, 3, "relu", 4, [0], kernel="fast"), "kernel"),
        (lambda: MoE(5, 3, "relu", 4, seed=-1), "seed"),
        (lambda: MoEStack(5, 3, "relu", 4, [0, 1])(torch.randn(3, 7, 5)), "x must have shape"),
        (lambda: MoE(5, 3, "relu", 4)(torch.randn(7, 4)), "x must have shape"),
        (lambda: parameter_count("cnn", 5, 3, "relu"), "kind"),
        (lambda: parameter_count("moe", 5, 3, "relu"), "n_experts"),
        (lambda: parameter_count("mlp", 5, 3, "relu", 4), "n_experts"),
        (lambda: forward_flops("moe", 5, 3, "tanh", 4), "activation"),
        (lambda: matched_dense_width(4, 3, 5, "relu", match="time"), "match"),
        (lambda: matched_dense_width(4, 3, 5, "relu", dense_activation="tanh"), "dense_activation"),
        (lambda: load_balancing_loss(torch.ones(3, 2) / 2, torch.zeros(3, dtype=torch.long), 3), "probs"),
    ],
)
def test_validation(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_one_expert_is_the_dense_network(activation):
    """E = 1: softmax of one logit is 1, so the mixture is its expert, and the expert is drawn
    exactly as the dense network of the same seed."""
    d, m = 6, 5
    moe = MoE(d, m, activation, 1, seed=3, dtype=torch.float64)
    mlp = MLP(d, m, activation, seed=3, dtype=torch.float64)
    assert torch.equal(moe.W[0], mlp.W) and torch.equal(moe.b[0], mlp.b)
    _randomize(moe)
    with torch.no_grad():
        mlp.a.copy_(moe.a[0])
        mlp.a0.copy_(moe.a0[0])
    x = torch.randn(20, d, dtype=torch.float64)
    torch.testing.assert_close(moe.router_probs(x), torch.ones(20, 1, dtype=torch.float64))
    torch.testing.assert_close(moe(x), mlp(x), rtol=1e-12, atol=1e-12)
    assert torch.equal(moe.route(x), torch.zeros(20, dtype=torch.long))


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_forward_is_top1_routing(activation):
    """route() is the argmax of the router, and the output is p_{e*} g_{e*} with g_e expert e
    evaluated as a dense network on its own."""
    d, m, E = 6, 4, 5
    moe = _randomize(MoE(d, m, activation, E, seed=1, dtype=torch.float64))
    x = torch.randn(40, d, dtype=torch.float64)
    probs = torch.softmax(x @ moe.R.T + moe.c, dim=-1)
    torch.testing.assert_close(moe.router_probs(x), probs)
    idx = moe.route(x)
    assert torch.equal(idx, probs.argmax(-1))
    assert len(set(idx.tolist())) > 1  # several experts are in use
    experts = []
    for e in range(E):
        net = MLP(d, m, activation, dtype=torch.float64)
        with torch.no_grad():
            for name in ("W", "b", "a", "a0"):
                getattr(net, name).copy_(getattr(moe, name)[e])
        experts.append(net(x))
    g = torch.stack(experts, dim=1)  # (n, E)
    want = probs.gather(1, idx[:, None]).squeeze(1) * g.gather(1, idx[:, None]).squeeze(1)
    torch.testing.assert_close(moe(x), want, rtol=1e-12, atol=1e-12)


def test_only_the_routed_experts_receive_gradient():
    moe = _randomize(MoE(4, 3, "gelu", 6, seed=0, dtype=torch.float64))
    x = torch.randn(5, 4, dtype=torch.float64)
    used = set(moe.route(x).tolist())
    assert len(used) < 6
    moe(x).square().sum().backward()
    for e in range(6):
        assert (moe.W.grad[e].abs().sum() > 0) == (e in used), e


def test_load_balancing_loss():
    E, n = 4, 8
    uniform = torch.full((n, E), 1.0 / E, dtype=torch.float64)
    balanced = torch.arange(n) % E
    assert float(load_balancing_loss(uniform, balanced, E)) == pytest.approx(1.0)
    collapsed = torch.zeros(n, dtype=torch.long)
    onehot = torch.nn.functional.one_hot(collapsed, E).double()
    assert float(load_balancing_loss(onehot, collapsed, E)) == pytest.approx(E)
    # through the model: two experts, a router that splits x > 0 from x < 0 with nearly uniform
    # probabilities (balanced, aux -> 1), then a bias that sends everything to expert 0 (aux -> 2)
    moe = MoE(1, 2, "relu", 2, seed=0, dtype=torch.float64)
    x = torch.tensor([[-1.0], [1.0], [-2.0], [2.0]], dtype=torch.float64)
    with torch.no_grad():
        moe.R.copy_(torch.tensor([[1e-6], [-1e-6]]))
        moe.c.zero_()
    assert sorted(moe.route(x).tolist()) == [0, 0, 1, 1]
    assert float(moe.aux_loss(x).detach()) == pytest.approx(1.0, abs=1e-5)
    with torch.no_grad():
        moe.c.copy_(torch.tensor([20.0, -20.0]))
    assert moe.route(x).tolist() == [0, 0, 0, 0]
    assert float(moe.aux_loss(x).detach()) == pytest.approx(2.0, abs=1e-5)


@pytest.mark.parametrize("activation", ["relu", "swiglu"])
def test_stack_equals_separate_models_and_kernels_agree(activation):
    seeds = [0, 5, 9]
    stack = MoEStack(6, 4, activation, 3, seeds, kernel="loop", dtype=torch.float64)
    fresh = MoE(6, 4, activation, 3, seed=5, dtype=torch.float64)
    assert all(torch.equal(getattr(stack, n)[1], getattr(fresh, n)) for n in MoEStack.param_names)
    _randomize(stack)
    x = torch.randn(10, 6, dtype=torch.float64)
    out = stack(x)
    for i, one in enumerate(stack.unstack()):
        torch.testing.assert_close(out[i], one(x))
    bmm = MoEStack.from_models(stack.unstack())
    bmm.kernel = "bmm"
    torch.testing.assert_close(bmm(x), out)
    torch.testing.assert_close(bmm.aux_loss(x), stack.aux_loss(x))
    xs = torch.randn(3, 10, 6, dtype=torch.float64)
    torch.testing.assert_close(bmm(xs), stack(xs))


def test_initialization_is_deterministic_and_the_router_breaks_ties():
    a = init_moe_parameters(8, 4, "reglu", 5, seed=2)
    b = init_moe_parameters(8, 4, "reglu", 5, seed=2)
    c = init_moe_parameters(8, 4, "reglu", 5, seed=3)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["R"], c["R"]) and not torch.equal(a["W"], c["W"])
    assert not a["a"].any() and not a["a0"].any() and not a["c"].any()
    assert 0 < float(a["R"].abs().max()) <= 0.1 / 8**0.5  # small: probabilities near uniform
    # expert 0 of a one-expert mixture is the dense network of that seed
    assert torch.equal(init_moe_parameters(8, 4, "reglu", 1, seed=2)["W"][0], init_parameters(8, 4, "reglu", seed=2)["W"])
    moe = MoE(8, 4, "relu", 5, seed=0)
    x = torch.randn(500, 8)
    assert len(set(moe.route(x).tolist())) == 5  # a random linear partition, not all to expert 0
    p = moe.router_probs(x).detach()
    assert float((p - 0.2).abs().max()) < 0.1


# ---- accounting ------------------------------------------------------------------------------


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_parameter_counts_match_the_modules(activation):
    d, m, E = 7, 5, 3
    stack = MLPStack(d, m, activation, [0, 1])
    assert parameter_count("mlp", d, m, activation) == sum(p.numel() for p in stack.parameters()) / 2
    moe = MoEStack(d, m, activation, E, [0, 1, 2])
    assert moe.n_parameters() == parameter_count("moe", d, m, activation, E) == sum(p.numel() for p in moe.parameters()) / 3
    H = 2 * m if activation in GATED else m
    assert parameter_count("moe", d, m, activation, E) == E * (d + 1) + E * parameter_count("mlp", d, m, activation) == E * (d + 1) + E * (H * (d + 1) + m + 1)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_flops_match_the_flop_counter(activation):
    d, m, E, n = 7, 5, 3, 11
    H = 2 * m if activation in GATED else m
    x = torch.randn(n, d)
    # dense: the module's own forward (the batched kernel does the readout as a product too)
    dense = MLPStack(d, m, activation, [0], kernel="bmm")
    assert _flops(lambda: dense(x)) == n * forward_flops("mlp", d, m, activation) == n * (2 * d * H + 2 * m)
    # mixture: the routed computation, router plus one expert, as the products a dispatch runs
    moe = MoE(d, m, activation, E)
    e = 1

    def routed():
        x @ moe.R.T
        h = x @ moe.W[e].T
        h[:, :m] @ moe.a[e].unsqueeze(1)

    assert _flops(routed) == n * forward_flops("moe", d, m, activation, E) == n * moe.forward_flops()
    # the vectorized implementation evaluates every expert's first layer (and no readout product)
    assert _flops(lambda: moe(x)) == n * (2 * d * E + 2 * d * E * H)


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("match", ["params", "flops"])
def test_matched_dense_width_is_the_closest(activation, match):
    d, E, m = 20, 10, 32
    count = parameter_count if match == "params" else forward_flops
    for dense_activation in (activation, "relu", "swiglu"):
        H = matched_dense_width(E, m, d, activation, match=match, dense_activation=dense_activation)
        target = count("moe", d, m, activation, E)
        diff = abs(count("mlp", d, H, dense_activation) - target)
        assert all(diff <= abs(count("mlp", d, k, dense_activation) - target) for k in (H - 1, H + 1) if k >= 1)
        slope = count("mlp", d, H + 1, dense_activation) - count("mlp", d, H, dense_activation)
        assert diff <= slope / 2
        if match == "params":
            assert diff <= m  # within one expert's bias vector at these sizes
    assert matched_dense_width(E, m, d, "relu") == 330  # (7 260 - 1) / 22 = 329.95
    assert matched_dense_width(E, m, d, "relu", match="flops") == 42  # 2*20*10 + 2*20*32 + 64 = 42 * 42 + 40


# ---- training --------------------------------------------------------------------------------


def test_training_reduces_the_mse_and_reports_the_plain_mse(small_data):
    cfg = a2_config("relu", min_steps=0, max_steps=300, batch=100, eval_every=50, target_mse=0.0, lr=0.03)
    stack = MoEStack(40, 8, "relu", 4, [0, 1], aux_weight=0.1)
    res = train(stack, small_data, cfg, progress=False)
    v = res.history["train_mse"]
    # the zero readout starts at MSE = mean(y^2), about var(y); a dense ReLU MLP of width 32
    # reaches about the same after this many updates
    assert bool((v.min(0).values < 0.7 * float(small_data.y_train.var())).all())
    assert bool((v[1:] < v[0]).all())
    # the kept checkpoint's reported value is its plain training MSE (no load-balancing term)
    torch.testing.assert_close(res.best_value, mse(res.stack, small_data.x_train, small_data.y_train), rtol=1e-6, atol=0)
    assert isinstance(res.models()[0], MoE)


def test_stacked_training_equals_separate_runs_and_per_model_lrs(small_data):
    cfg = TrainConfig(max_steps=40, batch=64, lr=0.01, eval_every=10)
    seeds, lrs = [0, 1], [0.01, 0.003]
    res = train(MoEStack(40, 6, "swiglu", 3, seeds), small_data, cfg, lrs=lrs, progress=False)
    for i, (s, lr) in enumerate(zip(seeds, lrs)):
        single = MoE(40, 6, "swiglu", 3, seed=s)
        one = train(single, small_data, cfg, lrs=[lr], progress=False)
        for name in MoEStack.param_names:
            torch.testing.assert_close(getattr(res.stack, name)[i], getattr(one.stack, name)[0], rtol=1e-5, atol=1e-6)
            assert torch.equal(getattr(single, name), getattr(one.stack, name)[0])  # trained in place
        torch.testing.assert_close(res.history["val_mse"][:, i], one.history["val_mse"][:, 0], rtol=1e-5, atol=1e-8)
    # different rates, different models
    assert not torch.allclose(res.stack.W[0], MoEStack(40, 6, "swiglu", 3, [0]).W[0])


def test_training_is_deterministic(small_data):
    cfg = TrainConfig(max_steps=20, batch=64, lr=0.01, eval_every=10)
    a = train(MoEStack(40, 4, "gelu", 3, [2]), small_data, cfg, progress=False)
    b = train(MoEStack(40, 4, "gelu", 3, [2]), small_data, cfg, progress=False)
    for name in MoEStack.param_names:
        assert torch.equal(getattr(a.stack, name), getattr(b.stack, name)), name


class Interrupt(Exception):
    pass


def test_resume_after_interrupt_is_bit_identical(small_data, tmp_path):
    cfg = a2_config("relu", min_steps=0, max_steps=60, batch=64, eval_every=10, patience_evals=50)
    make = lambda: MoEStack(40, 6, "reglu", 3, [0, 1])  # noqa: E731
    full = train(make(), small_data, cfg, lrs=[0.01, 0.02], progress=False)

    def boom(step):
        if step == 37:
            raise Interrupt

    ckpt = tmp_path / "moe.pt"
    with pytest.raises(Interrupt):
        train(make(), small_data, cfg, lrs=[0.01, 0.02], checkpoint=ckpt, checkpoint_every=15, progress=False, callback=boom)
    resumed = train(make(), small_data, cfg, lrs=[0.01, 0.02], checkpoint=ckpt, checkpoint_every=15, progress=False)
    assert resumed.resumed_from == 30
    for name in MoEStack.param_names:
        assert torch.equal(getattr(resumed.stack, name), getattr(full.stack, name)), name
    assert torch.equal(resumed.best_step, full.best_step) and torch.equal(resumed.history["train_mse"], full.history["train_mse"])
    # the mixture's settings are part of the fingerprint, and no MLP run can pick the file up
    with pytest.raises(ValueError, match="different arguments"):
        train(MoEStack(40, 6, "reglu", 3, [0, 1], aux_weight=0.0), small_data, cfg, lrs=[0.01, 0.02], checkpoint=ckpt, progress=False)
    with pytest.raises(ValueError, match="different arguments"):
        train(MLPStack(40, 6, "reglu", [0, 1]), small_data, cfg, lrs=[0.01, 0.02], checkpoint=ckpt, progress=False)


def test_aux_weight_enters_the_objective(small_data):
    cfg = TrainConfig(max_steps=10, batch=64, lr=0.01, eval_every=10)
    a = train(MoEStack(40, 4, "relu", 3, [0], aux_weight=0.0), small_data, cfg, progress=False)
    b = train(MoEStack(40, 4, "relu", 3, [0], aux_weight=1.0), small_data, cfg, progress=False)
    assert not torch.equal(a.stack.R, b.stack.R)


def test_manual_gradients_are_refused_for_a_mixture(small_data):
    cfg = TrainConfig(max_steps=2, batch=16, lr=1e-3, eval_every=1)
    with pytest.raises(ValueError, match="gradients='manual'"):
        train(MoE(40, 4, "relu", 2), small_data, cfg, progress=False, gradients="manual")
    res = train(MoE(40, 4, "relu", 2), small_data, cfg, progress=False, gradients="autograd")
    assert res.steps_run == 2
