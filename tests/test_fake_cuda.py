"""Device handling without a GPU: the CUDA stand-in (``tests/fake_cuda.py``) refuses what CUDA
refuses, and the paths a GPU user takes (training, the specialization table, kernel fits, gated
predictors, checkpoints, multi-job runs) run under it and agree with the CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import fake_cuda
from fake_cuda import FakeCudaTensor

from monosem import data, gating, specialization
from monosem.device import get_device
from monosem.kernels import LaplaceKernelRegressor, PerClusterOracle, RFMRegressor
from monosem.models import MLP, MLPStack
from monosem.train import TrainData, a1_config, a2_config, train

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "tests" / "fake_cuda_site"


@pytest.fixture
def cuda(monkeypatch):
    """The stand-in on, and get_device() choosing it."""
    monkeypatch.delenv("MONOSEM_DEVICE", raising=False)
    with fake_cuda.fake_cuda():
        yield torch.device("cuda")


def stand_in_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a subprocess that runs under the stand-in (its sitecustomize)."""
    env = {k: v for k, v in os.environ.items() if k != "MONOSEM_DEVICE"}
    env.update(MONOSEM_FAKE_CUDA="1", PYTHONPATH=os.pathsep.join([str(SITE), str(ROOT), env.get("PYTHONPATH", "")]),
               MONOSEM_CACHE=str(tmp_path / "cache"), MONOSEM_PROFILE="smoke", TQDM_DISABLE="1")
    return env


# --- the stand-in refuses what CUDA refuses -------------------------------------------------------

def test_stand_in_reports_a_cuda_device(cuda):
    assert torch.cuda.is_available() and get_device().type == "cuda"
    x = torch.zeros(3, device="cuda")
    assert isinstance(x, FakeCudaTensor) and x.device == torch.device("cuda", 0) and x.is_cuda
    assert torch.randn(2, 3).to(get_device()).device.type == "cuda"
    assert torch.ones(2).cuda().device.type == "cuda"
    assert MLP(4, 3, "relu").W.device.type == "cuda"


def test_stand_in_refuses_a_cpu_cuda_mix(cuda):
    x = torch.ones(3, 4, device="cuda")
    for op in (lambda: x + torch.ones(3, 4), lambda: x @ torch.ones(4, 2), lambda: torch.cat([x, torch.ones(1, 4)]),
               lambda: torch.ones(4) * x[0], lambda: x.index_select(0, torch.tensor([0])),
               lambda: torch.searchsorted(torch.arange(5.0, device="cuda"), torch.tensor([2.5])),
               lambda: torch.searchsorted(torch.arange(5.0, device="cuda"), torch.tensor(2.5)),
               lambda: torch.zeros(3)[torch.tensor([0], device="cuda")]):
        with pytest.raises(RuntimeError, match="same device|indices should be"):
            op()
    # what CUDA allows: CPU scalars in pointwise operations, CPU indices, copies across devices
    assert (x * torch.tensor(2.0)).device.type == "cuda"
    assert x[torch.tensor([0, 2])].shape == (2, 4) and x[torch.tensor([True, False, True])].shape == (2, 4)
    x[0:2] = torch.zeros(2, 4)
    assert x.cpu().sum() == 4.0 and torch.zeros(3, 4).copy_(x).sum() == 4.0
    # and it cannot be fooled by gradients: the same rule in an operation autograd records
    w = torch.ones(4, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="same device"):
        w * torch.ones(4)


def test_stand_in_refuses_a_cpu_generator_drawing_on_cuda(cuda):
    gen = torch.Generator().manual_seed(0)
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        torch.randn(3, device="cuda", generator=gen)
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        torch.randperm(5, device="cuda", generator=gen)
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        torch.zeros(3, device="cuda").normal_(generator=gen)
    # drawing on the CPU and moving the numbers is what monosem does
    assert torch.randn(3, generator=gen).to("cuda").device.type == "cuda"


def test_stand_in_refuses_numpy_until_cpu(cuda):
    x = torch.arange(4.0, device="cuda")
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        x.numpy()
    with pytest.raises(TypeError, match="Use Tensor.cpu"):
        np.asarray(x)
    assert x.cpu().numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0] and float(x.sum()) == 6.0 and f"{x.sum():.1f}" == "6.0"


def test_stand_in_refuses_cuda_in_a_process_forked_after_it_was_used(cuda):
    torch.zeros(1, device="cuda")  # the device is initialised
    pid = os.fork()
    if pid == 0:  # the child: CUDA must refuse
        try:
            torch.zeros(1, device="cuda")
            code = 1
        except RuntimeError as err:
            code = 0 if "Cannot re-initialize CUDA in forked subprocess" in str(err) else 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_stand_in_turns_off():
    with fake_cuda.fake_cuda():
        assert torch.cuda.is_available()
    assert not fake_cuda.enabled()
    if not torch.cuda.is_available():
        with pytest.raises((RuntimeError, AssertionError)):
            torch.zeros(1, device="cuda")  # a CPU build again


# --- the paths a GPU user takes ------------------------------------------------------------------

@pytest.fixture(scope="module")
def figure1_cpu():
    m = data.figure1_model()
    x, y, _ = m.sample(600, 11)
    xv, yv, _ = m.sample(200, 12)
    return m, TrainData(x, y, xv, yv)


def test_training_and_specialization_table_on_cuda(cuda, figure1_cpu, tmp_path):
    model, d = figure1_cpu
    cfg = a1_config("relu", max_steps=60, batch=64, eval_every=20)
    ref = train(MLPStack(model.d, 16, "relu", [0, 1], device="cpu"), d, cfg, progress=False)
    stack = MLPStack(model.d, 16, "relu", [0, 1])
    assert stack.W.device.type == "cuda"
    ckpt = tmp_path / "run.pt"
    res = train(stack, d, cfg, progress=False, checkpoint=ckpt)
    assert res.stack.W.device.type == "cuda" and res.best_value.device.type == "cpu"
    torch.testing.assert_close(res.stack.W.cpu(), ref.stack.W, rtol=1e-4, atol=1e-5)
    # a second call resumes the finished checkpoint (onto the device) and returns the same weights
    again = train(MLPStack(model.d, 16, "relu", [0, 1]), d, cfg, progress=False, checkpoint=ckpt)
    assert again.resumed_from == res.steps_run and torch.equal(again.stack.W.cpu(), res.stack.W.cpu())
    for net, ref_net in zip(res.models(), ref.models()):
        act = specialization.active_set(specialization.importance(net))
        assert act.device.type == "cuda"
        rows = specialization.specialization_table(net, model.directions)
        ref_rows = specialization.specialization_table(ref_net, model.directions)
        assert [r.n_active for r in rows] == [r.n_active for r in ref_rows]
        top = specialization.top_aligned(net, model.directions, k=2, min_A=0.0)
        assert net.W.detach()[top].device.type == "cuda"


def test_a2_training_of_a_gated_net_on_cuda(cuda, figure1_cpu):
    model, d = figure1_cpu
    cfg = a2_config("reglu", min_steps=20, max_steps=60, batch=64, eval_every=20, patience_evals=2)
    res = train(MLPStack(model.d, 8, "reglu", [0]), TrainData(d.x_train, d.y_train), cfg, progress=False)
    assert res.stack.W.device.type == "cuda" and np.isfinite(res.best_value.numpy()).all()
    rows = specialization.specialization_table(res.models()[0], model.directions)
    assert [r.branch for r in rows] == ["reglu gate", "reglu value"]


@pytest.mark.parametrize("solver", ["exact", "eigenpro", "cg"])
def test_laplace_fit_on_cuda_matches_the_cpu(cuda, solver):
    m = data.mixed_link_model(2)
    X, y, _ = m.pool(400)
    Xt, _, _ = m.test_set(100)
    kw = {"solver": solver, "max_iter": 5}
    ref = LaplaceKernelRegressor(device="cpu", **kw).fit(X, y)
    est = LaplaceKernelRegressor(**kw).fit(X, y)
    assert est.dual_coef_.device.type == "cuda"
    np.testing.assert_allclose(est.predict(Xt), ref.predict(Xt), rtol=1e-4, atol=1e-4)
    G = est.agop_tensor()
    assert G.device.type == "cuda"
    np.testing.assert_allclose(G.cpu().numpy(), ref.agop_tensor().numpy(), rtol=1e-3, atol=1e-6)


def test_rfm_fit_on_cuda_matches_the_cpu(cuda):
    m = data.mixed_link_model(2)
    X, y, _ = m.pool(400)
    Xt, _, _ = m.test_set(100)
    ref = RFMRegressor(iterations=2, device="cpu").fit(X, y)
    est = RFMRegressor(iterations=2).fit(X, y)
    np.testing.assert_allclose(est.predict(Xt), ref.predict(Xt), rtol=1e-4, atol=1e-4)


def test_rfm_resumes_on_cuda_from_its_checkpoint(cuda, tmp_path):
    """The checkpoint holds host tensors; a fit resumed on the device restores its iterations
    there and predicts as the uninterrupted fit does."""
    m = data.mixed_link_model(2)
    X, y, _ = m.pool(400)
    Xt, yt, _ = m.test_set(100)
    whole = RFMRegressor(iterations=2).fit(X, y, X_test=Xt, y_test=yt)
    path = tmp_path / "rfm.pt"
    RFMRegressor(iterations=1).fit(X, y, checkpoint=tmp_path / "other.pt")  # another file: untouched
    first = RFMRegressor(iterations=2).fit(X, y, X_test=Xt, y_test=yt, checkpoint=path)
    saved = torch.load(path, weights_only=True)
    assert all(it["state"]["dual_coef"].device.type == "cpu" for it in saved["iterations"])
    resumed = RFMRegressor(iterations=2).fit(X, y, X_test=Xt, y_test=yt, checkpoint=path)
    assert all(est.dual_coef_.device.type == "cuda" for est in resumed.estimators_)
    for t in range(3):
        np.testing.assert_array_equal(resumed.predict(Xt, iteration=t), first.predict(Xt, iteration=t))
    assert resumed.test_mse_ == first.test_mse_ == whole.test_mse_


def test_an_rfm_oracle_resumes_on_cuda_from_its_cluster_checkpoints(cuda, tmp_path):
    m = data.mixed_link_model(2)
    X, y, c = m.pool(400)
    Xt, _, ct = m.test_set(100)
    first = PerClusterOracle(RFMRegressor(iterations=1)).fit(X, y, c, checkpoint=tmp_path / "oracle")
    resumed = PerClusterOracle(RFMRegressor(iterations=1)).fit(X, y, c, checkpoint=tmp_path / "oracle")
    assert all(est.dual_coef_.device.type == "cuda" for fit in resumed.estimators_.values() for est in fit.estimators_)
    np.testing.assert_array_equal(resumed.predict(Xt, ct), first.predict(Xt, ct))


@pytest.mark.parametrize("local", ["laplace", "rfm"])
def test_gated_predictor_on_cuda(cuda, figure1_cpu, local):
    m = data.mixed_link_model(2)
    X, y, c = m.pool(600)
    Xt, yt, ct = m.test_set(200)
    res = train(MLPStack(m.d, 16, "relu", [0]), TrainData(X, y), a2_config("relu", min_steps=20, max_steps=60, batch=64, eval_every=20),
                progress=False)
    mlp = res.models()[0]
    assert mlp.W.device.type == "cuda"
    params = {"iterations": 1} if local == "rfm" else {}
    est = gating.MLPGatedRegressor(mlp, local=local, n_gates=2, local_params=params).fit(X, y)
    pred = est.predict(Xt)
    assert pred.shape == (200,) and np.isfinite(pred).all()
    assert 0.0 <= est.gate_purity(Xt, ct) <= 1.0


# --- multi-job runs -----------------------------------------------------------------------------

def test_process_pool_spawns_on_cuda(cuda):
    from monosem.experiments.runner import _pool_context

    assert _pool_context().get_start_method() == "spawn"


@pytest.mark.slow
def test_monosem_run_with_two_jobs_under_the_stand_in(tmp_path):
    """``monosem run --jobs 2`` on a CUDA device: the workers are spawned (a forked worker would
    meet "Cannot re-initialize CUDA in forked subprocess") and every cell is computed on it."""
    env = stand_in_env(tmp_path)
    cmd = [sys.executable, "-m", "monosem", "run", "fig2", "--profile", "smoke", "--K", "1", "--n", "500",
           "--methods", "mlp-relu", "laplace", "--jobs", "2"]
    out = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    records = [json.loads(p.read_text()) for p in (tmp_path / "cache").rglob("*.json")]
    methods = {r["config"]["method"] for r in records}
    assert {"mlp-relu", "laplace"} <= methods, methods
    assert {r["timing"]["device"] for r in records} == {"cuda"}


def test_a_forked_pool_would_fail_under_the_stand_in(tmp_path):
    """The check above is not vacuous: with the pool forced to fork, the same run fails with
    CUDA's message."""
    env = stand_in_env(tmp_path)
    code = ("import multiprocessing, sys\n"
            "import monosem.experiments.runner as r\n"
            "r._pool_context = lambda: multiprocessing.get_context('fork')\n"
            "from monosem.__main__ import main\n"
            "sys.exit(main(['run', 'fig2', '--profile', 'smoke', '--K', '1', '--n', '500', '--methods', 'mlp-relu', 'laplace', '--jobs', '2']))\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode != 0 and "Cannot re-initialize CUDA in forked subprocess" in out.stderr, out.stderr[-3000:]
