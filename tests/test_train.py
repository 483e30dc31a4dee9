"""The training loop: schedule, stopping rules, Adam, resume, batched = sequential."""


import pytest
import torch

from monosem.data import figure1_model
from monosem.models import MLP, MLPStack
from monosem.train import TrainConfig, TrainData, a1_config, a2_config, cosine_lr, replay_stopping, train


def test_cosine_schedule_end_points():
    assert cosine_lr(0, 1000, 0.016, 0.1) == pytest.approx(0.016)
    assert cosine_lr(1000, 1000, 0.016, 0.1) == pytest.approx(0.0016)
    assert cosine_lr(500, 1000, 0.016, 0.1) == pytest.approx(0.5 * (0.016 + 0.0016))
    lrs = [cosine_lr(s, 100, 1.0, 0.01) for s in range(101)]
    assert all(a >= b for a, b in zip(lrs, lrs[1:]))
    assert a2_config("relu").final_lr_ratio == 0.01 and a1_config("gelu").final_lr_ratio == 0.1


def test_a1_rule_keeps_the_best_validation_checkpoint_and_never_stops_early():
    cfg = a1_config("relu", max_steps=5000, eval_every=500)
    curve = [5, 4, 3, 2.5, 2.6, 2.7, 2.4, 3, 3, 3]
    assert replay_stopping(curve, cfg) == (5000, 3500)


def test_a2_rule_stops_at_target_mse_only_after_min_steps():
    cfg = a2_config("relu", min_steps=2000, max_steps=10_000, eval_every=500, target_mse=4e-4)
    curve = [1e-2, 3e-4, 2e-4, 1e-4, 9e-5, 8e-5] + [7e-5] * 20
    # reaches the target at step 1000, but may stop only from step 2000 on
    assert replay_stopping(curve, cfg) == (2000, 2000)


def test_a2_rule_plateau_counts_relative_improvements():
    cfg = a2_config("relu", min_steps=0, max_steps=10**6, eval_every=500, patience_evals=3, target_mse=0.0)
    # improvements of 1e-4 relative are below the 5e-4 threshold: they move the kept checkpoint
    # but do not reset the plateau counter
    curve = [1.0, 0.5, 0.5 * (1 - 1e-4), 0.5 * (1 - 2e-4), 0.5 * (1 - 3e-4), 0.1]
    stop, best = replay_stopping(curve, cfg)
    assert stop == 2500 and best == 2500
    curve = [1.0, 0.5, 0.49, 0.48, 0.48, 0.48, 0.48]
    assert replay_stopping(curve, cfg) == (3500, 2000)


def test_a2_rule_respects_max_steps():
    cfg = a2_config("relu", min_steps=0, max_steps=1500, eval_every=500, patience_evals=60, target_mse=0.0)
    assert replay_stopping([1.0, 0.9, 0.8, 0.7, 0.6], cfg)[0] == 1500


def test_adam_matches_torch_optim(small_data):
    cfg = TrainConfig(max_steps=30, batch=100, lr=0.01, final_lr_ratio=1.0, eval_every=30)
    model = MLP(40, 16, "gelu", seed=4)
    ref = MLP(40, 16, "gelu", seed=4)
    res = train(model, small_data, cfg, progress=False)
    # replay the same batches with torch.optim.Adam
    from monosem.train.loop import _BatchOrder

    order = _BatchOrder([4], [600], 100, torch.device("cpu"))
    opt = torch.optim.Adam([ref.W, ref.b, ref.a, ref.a0], lr=0.01)
    for step in range(30):
        idx = order.indices(step)[0]
        opt.zero_grad()
        ((ref(small_data.x_train[idx]) - small_data.y_train[idx]) ** 2).mean().backward()
        opt.step()
    got = res.models()[0]
    for name in ("W", "b", "a", "a0"):
        torch.testing.assert_close(getattr(got, name), getattr(ref, name), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kernel", ["bmm", "loop"])
def test_batched_equals_separate_runs(small_data, kernel):
    cfg = TrainConfig(max_steps=60, batch=64, lr=0.01, eval_every=20)
    seeds, lrs = [0, 1, 2], [0.01, 0.004, 0.02]
    stack = MLPStack(40, 16, "swiglu", seeds, kernel=kernel)
    res = train(stack, small_data, cfg, lrs=lrs, progress=False)
    for i, (s, lr) in enumerate(zip(seeds, lrs)):
        one = train(MLPStack(40, 16, "swiglu", [s]), small_data, cfg, lrs=[lr], progress=False)
        for name in ("W", "b", "a", "a0"):
            torch.testing.assert_close(getattr(res.stack, name)[i], getattr(one.stack, name)[0], rtol=1e-4, atol=1e-5)
        assert int(res.best_step[i]) == int(one.best_step[0])
        torch.testing.assert_close(res.history["val_mse"][:, i], one.history["val_mse"][:, 0], rtol=1e-4, atol=1e-7)


class Interrupt(Exception):
    pass


def test_resume_after_interrupt_is_bit_identical(small_data, tmp_path):
    cfg = a2_config("relu", min_steps=0, max_steps=80, batch=64, eval_every=10, patience_evals=50)
    full = train(MLPStack(40, 16, "relu", [0, 1]), small_data, cfg, lrs=[0.01, 0.02], progress=False)

    def boom(step):
        if step == 37:
            raise Interrupt

    ckpt = tmp_path / "run.pt"
    with pytest.raises(Interrupt):
        train(MLPStack(40, 16, "relu", [0, 1]), small_data, cfg, lrs=[0.01, 0.02], checkpoint=ckpt, checkpoint_every=15, progress=False, callback=boom)
    assert ckpt.exists() and not ckpt.with_name("run.pt.tmp").exists()
    resumed = train(MLPStack(40, 16, "relu", [0, 1]), small_data, cfg, lrs=[0.01, 0.02], checkpoint=ckpt, checkpoint_every=15, progress=False)
    assert resumed.resumed_from == 30
    # the time of the first sitting (up to its last checkpoint, step 30) travels with the run
    assert resumed.earlier_seconds > 0 and resumed.earlier_cpu_seconds > 0
    assert full.earlier_seconds == 0.0
    for name in ("W", "b", "a", "a0"):
        assert torch.equal(getattr(resumed.stack, name), getattr(full.stack, name)), name
    assert torch.equal(resumed.best_step, full.best_step)
    # a finished run is returned from its checkpoint without training again
    again = train(MLPStack(40, 16, "relu", [0, 1]), small_data, cfg, lrs=[0.01, 0.02], checkpoint=ckpt, progress=False)
    assert again.resumed_from == again.steps_run
    assert torch.equal(again.stack.W, full.stack.W)
    with pytest.raises(ValueError, match="different arguments"):
        train(MLPStack(40, 16, "relu", [0, 1]), small_data, cfg, lrs=[0.01, 0.03], checkpoint=ckpt, progress=False)


def test_a2_training_stops_models_independently(small_data):
    # a huge target MSE stops every model at the first evaluation after min_steps
    cfg = a2_config("gelu", min_steps=20, max_steps=200, batch=64, eval_every=10, target_mse=100.0)
    res = train(MLPStack(40, 8, "gelu", [0, 1]), small_data, cfg, progress=False)
    assert res.stop_step.tolist() == [20, 20] and res.steps_run == 20


def test_training_reduces_the_loss(small_data):
    cfg = a2_config("swiglu", min_steps=0, max_steps=300, batch=100, eval_every=50, target_mse=0.0)
    model = MLP(40, 32, "swiglu", seed=0)
    res = train(model, small_data, cfg, progress=False)
    torch.testing.assert_close(model.W, res.stack.W[0])  # an MLP is trained in place
    v = res.history["train_mse"][:, 0]
    assert v.min() < 0.5 * float(small_data.y_train.var())
    assert float(res.best_value[0]) == pytest.approx(float(v.min()))


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: TrainConfig(max_steps=10, batch=4, lr=0.0), "lr"),
        (lambda: TrainConfig(max_steps=10, batch=4, lr=-1e-3), "lr"),
        (lambda: TrainConfig(max_steps=0, batch=4, lr=1e-3), "max_steps"),
        (lambda: TrainConfig(max_steps=10, batch=4, lr=1e-3, protocol="b"), "protocol"),
        (lambda: a1_config("tanh"), "activation"),
    ],
)
def test_bad_config(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_train_arguments(small_data):
    cfg = TrainConfig(max_steps=10, batch=4, lr=1e-3)
    with pytest.raises(ValueError, match="lr"):
        train(MLP(40, 4, "relu"), small_data, cfg, lrs=[0.0], progress=False)
    with pytest.raises(ValueError, match="batch"):
        train(MLP(40, 4, "relu"), small_data, TrainConfig(max_steps=10, batch=10_000, lr=1e-3), progress=False)
    with pytest.raises(ValueError, match="validation"):
        train(MLP(40, 4, "relu"), TrainData(small_data.x_train, small_data.y_train), cfg, progress=False)


def test_batch_order_is_a_permutation_per_epoch_and_respects_n_used():
    from monosem.train.loop import _BatchOrder

    order = _BatchOrder([3, 4, 5], [100, 60, 100], 20, torch.device("cpu"))
    first = torch.cat([order.indices(s) for s in range(5)], dim=1)  # one epoch of the n=100 models
    for i in (0, 2):
        assert sorted(first[i].tolist()) == list(range(100))
    assert first[1].max() < 60 and sorted(first[1, :60].tolist()) == list(range(60))
    assert not torch.equal(first[0], first[2])  # different seeds, different orders
    again = _BatchOrder([3, 4, 5], [100, 60, 100], 20, torch.device("cpu"))
    assert torch.equal(again.indices(7), order.indices(7))  # a pure function of (seed, step)


def test_per_model_data_equals_separate_runs():
    m = figure1_model()
    xs, ys = zip(*[m.sample(300, s)[:2] for s in (21, 22)])
    x, y = torch.stack(xs), torch.stack(ys)
    cfg = a2_config("gelu", min_steps=0, max_steps=40, batch=50, eval_every=10, target_mse=0.0)
    both = train(MLPStack(40, 8, "gelu", [0, 1]), TrainData(x, y, n_used=(300, 200)), cfg, progress=False)
    for i, n in enumerate((300, 200)):
        one = train(MLPStack(40, 8, "gelu", [i]), TrainData(x[i, :n], y[i, :n]), cfg, progress=False)
        torch.testing.assert_close(both.stack.W[i], one.stack.W[0], rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(both.history["train_mse"][:, i], one.history["train_mse"][:, 0], rtol=1e-4, atol=1e-7)


def test_a_diverging_model_is_frozen_without_disturbing_the_others(small_data):
    cfg = TrainConfig(max_steps=40, batch=64, lr=0.01, eval_every=10)
    res = train(MLPStack(40, 8, "relu", [0, 1]), small_data, cfg, lrs=[0.01, 1e30], progress=False)
    one = train(MLPStack(40, 8, "relu", [0]), small_data, cfg, lrs=[0.01], progress=False)
    torch.testing.assert_close(res.stack.W[0], one.stack.W[0], rtol=1e-4, atol=1e-5)
    assert int(res.stop_step[1]) < 40 and torch.isfinite(res.stack.W[1]).all()


def test_stack_adam_is_torch_adam_per_model():
    """The optimizer object: init/update with one learning rate per model equals torch.optim.Adam
    run on each model alone."""
    from monosem.train.adam import StackAdam

    gen = torch.Generator().manual_seed(3)
    p = torch.randn(2, 5, 3, generator=gen, dtype=torch.float64)
    grads = [torch.randn(2, 5, 3, generator=gen, dtype=torch.float64) for _ in range(4)]
    lrs = torch.tensor([0.01, 0.05], dtype=torch.float64)
    opt = StackAdam()
    mine, state = p.clone(), opt.init([p])
    for g in grads:
        state = opt.update([mine], [g], state, lrs)
    assert state.count == len(grads)
    for i in range(2):
        ref = p[i].clone().requires_grad_(True)
        torch_opt = torch.optim.Adam([ref], lr=float(lrs[i]))
        for g in grads:
            ref.grad = g[i].clone()
            torch_opt.step()
        torch.testing.assert_close(mine[i], ref.detach(), rtol=1e-12, atol=1e-14)


def test_readout_lr_scale_multiplies_only_the_readout_rate(small_data):
    """The muP reading: StackAdam's per-tensor factor reaches the readout alone; scale 1 is the
    plain update (bit for bit)."""
    from monosem.models import mup_readout_lr_scale
    from monosem.train.adam import StackAdam

    assert mup_readout_lr_scale(1024, 4096) == 4.0
    gen = torch.Generator().manual_seed(1)
    ps = [torch.randn(2, 3, generator=gen, dtype=torch.float64) for _ in range(2)]
    gs = [torch.randn(2, 3, generator=gen, dtype=torch.float64) for _ in range(2)]
    lr = torch.tensor([0.01, 0.02], dtype=torch.float64)
    opt = StackAdam()
    plain, scaled = [p.clone() for p in ps], [p.clone() for p in ps]
    opt.update(plain, gs, opt.init(plain), lr)
    opt.update(scaled, gs, opt.init(scaled), lr, scales=[1.0, 3.0])
    assert torch.equal(plain[0], scaled[0])
    torch.testing.assert_close(scaled[1] - ps[1], 3 * (plain[1] - ps[1]))
    cfg = TrainConfig(max_steps=20, batch=100, lr=0.01, eval_every=20)
    a = MLPStack(40, 8, "relu", [0])
    b = MLPStack(40, 8, "relu", [0], readout_lr_scale=4.0)
    train(a, small_data, cfg, progress=False)
    train(b, small_data, cfg, progress=False)
    assert not torch.equal(a.a, b.a) and b.unstack()[0].readout_lr_scale == 4.0


def test_a_resumed_cell_records_the_time_of_every_sitting(tmp_path):
    from monosem.experiments.cache import EARLIER_CPU_SECONDS, EARLIER_SECONDS, Job, ResultCache
    from monosem.experiments.specs import DataSpec

    cache = ResultCache(tmp_path)
    job = Job("mlp-relu", DataSpec(2, 100, 0, 8))
    rec = cache.save(job, {"test_mse": 1.0, EARLIER_SECONDS: 30.0, EARLIER_CPU_SECONDS: 20.0}, 5.0, cpu_seconds=4.0)
    assert rec["timing"]["seconds"] == 35.0 and rec["timing"]["cpu_seconds"] == 24.0
    assert rec["timing"]["earlier_sittings_seconds"] == 30.0
    assert rec["metrics"] == {"test_mse": 1.0}  # the bookkeeping names are not metrics
    plain = cache.save(job.on(n=200), {"test_mse": 1.0}, 5.0)
    assert plain["timing"]["seconds"] == 5.0 and "earlier_sittings_seconds" not in plain["timing"]
