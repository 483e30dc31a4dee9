"""What a cell of a sweep is, typed: its data, its network or estimator, its training or solver.

A :class:`~monosem.experiments.cache.Job` carries its settings as the flat dictionary its cache
key is made of (:func:`~monosem.experiments.sweeps.method_params` writes it). The computations
and the pages read them through the frozen dataclasses of this module instead, one per kind of
setting, each built from a job by ``of(job)``, so that the key's spelling (``lr_final``,
``rel_improvement``, a ``step`` that is absent for revision 1, a ``gamma`` that is absent for the
paper's 4) is known here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ..data import mixed_link_model
from ..device import resolve_dtype
from ..train import TrainConfig, a2_config
from .cache import Job
from .sweeps import PAPER_GAMMA, step_revision_of

__all__ = ["DataSpec", "NetworkSpec", "MixtureSpec", "SolverSpec", "KernelSpec", "GatedSpec", "width_of"]


@dataclass(frozen=True)
class DataSpec:
    """The data of a cell: run ``run``'s mixed-link model at K clusters (separation ``gamma``,
    cluster probabilities from a Zipf law of exponent ``zipf``, or balanced when ``None``), its
    first ``n`` training examples and ``n_test`` test examples, in precision ``dtype``."""

    K: int
    n: int
    run: int
    n_test: int
    gamma: float = PAPER_GAMMA
    zipf: float | None = None
    dtype: str = "float32"

    @classmethod
    def of(cls, job: Job) -> "DataSpec":
        p = job.param_dict
        return cls(job.K, job.n, job.run, int(p["n_test"]), float(p.get("gamma", PAPER_GAMMA)),
                   float(p["zipf"]) if "zipf" in p else None, str(p.get("dtype", "float32")))

    @property
    def torch_dtype(self) -> torch.dtype:
        return resolve_dtype(self.dtype)

    def model(self):
        """The run's :func:`~monosem.data.mixed_link_model`."""
        return mixed_link_model(self.K, run=self.run, gamma=self.gamma, zipf=self.zipf or 0.0)


@dataclass(frozen=True)
class NetworkSpec:
    """An MLP cell's network and its Appendix A.2 training protocol."""

    activation: str
    width: int
    batch: int
    lr: float
    final_lr: float
    min_steps: int
    max_steps: int
    eval_every: int
    patience_evals: int
    target_mse: float
    min_rel_improvement: float
    step_revision: int

    @classmethod
    def of(cls, job_or_params: Job | dict[str, Any]) -> "NetworkSpec":
        p = job_or_params.param_dict if isinstance(job_or_params, Job) else dict(job_or_params)
        return cls(str(p["activation"]), int(p["width"]), int(p["batch"]), float(p["lr"]), float(p["lr_final"]), int(p["min_steps"]),
                   int(p["max_steps"]), int(p["eval_every"]), int(p["patience_evals"]), float(p["target_mse"]),
                   float(p["rel_improvement"]), step_revision_of(p))

    def train_config(self) -> TrainConfig:
        """The A.2 :class:`~monosem.train.TrainConfig` of this network."""
        return a2_config(self.activation, min_steps=self.min_steps, max_steps=self.max_steps, batch=self.batch,
                         eval_every=self.eval_every, patience_evals=self.patience_evals, target_mse=self.target_mse, lr=self.lr,
                         final_lr_ratio=self.final_lr / self.lr, min_rel_improvement=self.min_rel_improvement,
                         step_revision=self.step_revision)


@dataclass(frozen=True)
class MixtureSpec:
    """A mixture-of-experts cell: ``n_experts`` experts of the network's width and activation,
    trained under its protocol, with the router's load-balancing weight and initial scale."""

    network: NetworkSpec
    n_experts: int
    aux_weight: float
    router_scale: float

    @classmethod
    def of(cls, job: Job) -> "MixtureSpec":
        p = job.param_dict
        return cls(NetworkSpec.of(p), int(p["n_experts"]), float(p["aux_weight"]), float(p["router_scale"]))


@dataclass(frozen=True)
class SolverSpec:
    """A kernel cell's solver: ridge, the size from which EigenPro replaces the exact solve, its
    target training MSE and iteration limit, the precision, and the EigenPro revision when the cell
    may run EigenPro (``None`` otherwise)."""

    ridge: float
    exact_max_n: int
    target_mse: float
    max_iter: int
    dtype: str
    eigenpro_revision: int | None = None

    @classmethod
    def of(cls, job: Job) -> "SolverSpec":
        p = job.param_dict
        return cls(float(p["ridge"]), int(p["exact_max_n"]), float(p["target_mse"]), int(p["solver_max_iter"]), str(p["dtype"]),
                   int(p["eigenpro"]) if "eigenpro" in p else None)

    def kwargs(self, seed: int) -> dict[str, Any]:
        """The regressors' solver arguments (:class:`~monosem.kernels.LaplaceKernelRegressor`)."""
        return {"ridge": self.ridge, "exact_max_n": self.exact_max_n, "target_mse": self.target_mse, "max_iter": self.max_iter,
                "dtype": self.dtype, "random_state": seed}


@dataclass(frozen=True)
class KernelSpec:
    """A kernel cell: its bandwidth rule, its solver and (RFM) the AGOP's sample count."""

    bandwidth: str
    solver: SolverSpec
    agop_samples: int | None = None

    @classmethod
    def of(cls, job: Job) -> "KernelSpec":
        p = job.param_dict
        return cls(str(p["bandwidth"]), SolverSpec.of(job), int(p["agop_samples"]) if "agop_samples" in p else None)


@dataclass(frozen=True)
class GatedSpec:
    """An MLP-gated cell (Section 3.3): its local kernels, the K-means restarts and iterations of
    its gates, and the ReLU network whose contribution profiles route the points."""

    local: KernelSpec
    n_init: int
    max_iter: int
    source: NetworkSpec

    @classmethod
    def of(cls, job: Job) -> "GatedSpec":
        p = job.param_dict
        return cls(KernelSpec.of(job), int(p["n_init"]), int(p["max_iter"]), NetworkSpec.of(dict(p["source"])))

    def source_job(self, job: Job) -> Job:
        """The MLP cell whose network this gated cell routes with."""
        return Job.make("mlp-relu", job.K, job.n, job.run, job.profile, **dict(job.param_dict["source"]))


def width_of(job: Job) -> int | None:
    """The width of a network cell (an MLP, or a mixture's experts), ``None`` for any other cell."""
    return int(job.param_dict["width"]) if job.method.startswith(("mlp-", "moe-")) else None
