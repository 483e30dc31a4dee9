"""Stack sizes: the environment variable, the CPU default, and the GPU rule by free memory."""

import dataclasses

import pytest
import torch

from monosem.experiments import methods
from monosem.experiments.cache import Job
from monosem.experiments.specs import DataSpec
from monosem.experiments.sweeps import sweep
from monosem.train import step_memory_bytes


def _job(width=4096, batch=4096, activation="reglu"):
    # a real MLP cell's settings (Figure 6 declares every activation), at this width and batch
    cell = sweep("fig6", "smoke", methods=["mlp-" + activation])[0]
    spec = dataclasses.replace(cell.spec, width=width, batch=batch)
    return Job("mlp-" + activation, DataSpec(10, 20_000, 0, 8), spec, "gpu")


def test_step_memory_grows_with_batch_times_hidden_width():
    relu = step_memory_bytes(1024, 1024, "relu", 20)
    assert step_memory_bytes(1024, 1024, "reglu", 20) == pytest.approx(2 * relu, rel=0.01)  # H = 2 x width
    assert step_memory_bytes(1024, 2048, "relu", 20) == pytest.approx(2 * relu, rel=0.01)
    assert step_memory_bytes(1024, 1024, "relu", 20, torch.float64) == 2 * relu
    with pytest.raises(ValueError, match="activation"):
        step_memory_bytes(1024, 1024, "tanh", 20)


def test_environment_variable_wins_and_is_validated(monkeypatch):
    monkeypatch.setenv("MONOSEM_MAX_STACK", "3")
    assert methods.max_stack(_job()) == 3
    for bad in ("0", "many"):
        monkeypatch.setenv("MONOSEM_MAX_STACK", bad)
        with pytest.raises(ValueError, match="MONOSEM_MAX_STACK"):
            methods.max_stack()


def test_cpu_default_and_gpu_rule_by_free_memory(monkeypatch):
    monkeypatch.delenv("MONOSEM_MAX_STACK", raising=False)
    monkeypatch.setattr(methods, "get_device", lambda: torch.device("cpu"))
    assert methods.max_stack(_job()) == 4
    monkeypatch.setattr(methods, "get_device", lambda: torch.device("cuda"))
    per_net = step_memory_bytes(4096, 4096, "reglu", 20)
    for free_gb in (15, 80, 139):
        monkeypatch.setattr(torch.cuda, "mem_get_info", lambda dev, f=free_gb: (f * 2**30, f * 2**30))
        size = methods.max_stack(_job())
        assert 1 <= size <= methods.MAX_STACK_CAP
        assert size == min(methods.MAX_STACK_CAP, max(1, int(methods.GPU_MEMORY_SHARE * free_gb * 2**30 // per_net)))
        assert size * per_net <= free_gb * 2**30 or size == 1  # a stack fits in the free memory
    # a T4 (15 GB) holds a handful of width-4 096 ReGLU networks at batch 4 096, an H200 dozens
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda dev: (15 * 2**30, 15 * 2**30))
    small = methods.max_stack(_job())
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda dev: (139 * 2**30, 139 * 2**30))
    assert methods.max_stack(_job()) > small
    assert methods.max_stack() == 16  # no job to size by
