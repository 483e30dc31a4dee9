"""The typed settings of a cell of a sweep (a :class:`~.cache.Job`): its data, its network or
estimator, its training or solver.

A :class:`~monosem.experiments.cache.Job` is a method, a :class:`DataSpec` and the method's spec
(:class:`NetworkSpec`, :class:`MixtureSpec`, :class:`KernelSpec`, :class:`GatedSpec`, a registered
method's own frozen dataclass, or ``None`` for the Bayes predictor, which reads only the data).
The cache key is these serialized whole (:func:`spec_config`): every field named, none implied by
its absence, with one exception: a network at Appendix A.2's default initialization
(:data:`A2_INIT`) keeps the key it had before its initialization was a field
(:meth:`NetworkSpec.spec_config`). The keys of cells computed before the specs were typed are
spelled only in ``scripts/migrate_recorded.py``, which rewrites such cells under their typed keys.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch

from ..data import LABEL_NOISE_VARIANCE, mixed_link_model
from ..device import resolve_dtype
from ..checks import check_choice, check_positive
from ..models import AUX_WEIGHT, GATED, INITS, ROUTER_SCALE
from ..train import TrainConfig, a2_config

__all__ = ["PAPER_GAMMA", "MIXED_LINK_D", "DATA_FIELDS", "DataSpec", "data_config", "NetworkInit", "A2_INIT", "NetworkSpec", "MixtureSpec", "SolverSpec", "KernelSpec", "GatedSpec", "spec_config",
           "network_of", "width_of"]

#: the paper's separation knob of the mixed-link model (eq. 3)
PAPER_GAMMA = 4.0
#: the mixed-link model's input dimension d (Section 3.2: 10 routing + 10 predictive coordinates)
MIXED_LINK_D = 20


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

    @property
    def torch_dtype(self) -> torch.dtype:
        return resolve_dtype(self.dtype)

    def model(self):
        """The run's :func:`~monosem.data.mixed_link_model`."""
        return mixed_link_model(self.K, run=self.run, gamma=self.gamma, zipf=self.zipf or 0.0)


@dataclass(frozen=True, kw_only=True)
class NetworkInit:
    """How an A.2 network starts and how its readout learns: the choices Appendix A.2 leaves
    unstated (A.1 names a "balanced feature-learning initialization" and a "width-aware
    parameterization" without defining them).

    ``init``: an initialization of :func:`monosem.models.init_parameters` (``"pytorch"``: PyTorch's
    hidden init and a zero readout; ``"balanced"``: |a_j| = ||(w_j, b_j)|| with random signs;
    ``"standard"``: PyTorch's readout too); the hidden rows times ``hidden_scale``; a gated
    network's value rows times ``value_scale`` after that; the readout's Adam rate over every other
    tensor's, ``readout_lr``; the output multiplier ``output_scale`` (f = alpha sum_j a_j h_j + a_0;
    the rates are *not* divided by it: alpha = 1/width is the mean-field form). The defaults are
    the book's A.2 reading (:data:`A2_INIT`)."""

    init: str = "pytorch"
    hidden_scale: float = 1.0
    value_scale: float = 1.0
    readout_lr: float = 1.0
    output_scale: float = 1.0

    def __post_init__(self) -> None:
        check_choice(self.init, "init", INITS)
        for name in ("hidden_scale", "value_scale", "readout_lr", "output_scale"):
            object.__setattr__(self, name, check_positive(getattr(self, name), name))

    @property
    def words(self) -> str:
        """What differs from :data:`A2_INIT`, in a few words ("" for the default)."""
        default = NetworkInit()
        return ", ".join(f"{f.name} {getattr(self, f.name):.4g}" if isinstance(getattr(self, f.name), float) else f"{f.name} {getattr(self, f.name)}"
                         for f in dataclasses.fields(self) if getattr(self, f.name) != getattr(default, f.name))

    def stack_kwargs(self) -> dict[str, Any]:
        """The :class:`~monosem.models.MLPStack` / :class:`~monosem.models.MLP` arguments it sets."""
        return {"init": self.init, "hidden_scale": self.hidden_scale, "output_scale": self.output_scale,
                "readout_lr_scale": self.readout_lr}

    def scale_values(self, net, activation: str) -> None:
        """Multiply a gated network's (or stack's) initial value rows by ``value_scale``."""
        if activation in GATED and self.value_scale != 1.0:
            width = net.width
            with torch.no_grad():
                net.W[..., width:, :] *= self.value_scale
                net.b[..., width:] *= self.value_scale


#: Appendix A.2's initialization as the book reads it when nothing else is named: PyTorch's
#: hidden init, zero readout, every tensor at the stated Adam rate (``monosem.models``' default)
A2_INIT = NetworkInit()


@dataclass(frozen=True, kw_only=True)
class NetworkSpec:
    """An MLP cell's network and its Appendix A.2 training protocol (``step_revision``: the
    hand-derived training step's revision, :class:`~monosem.train.TrainConfig`); A.2 trains to
    the label-noise variance. ``start``: its initialization and readout rate
    (:class:`NetworkInit`; A.2 states none)."""

    activation: str
    width: int
    batch: int
    lr: float
    final_lr: float
    min_steps: int
    max_steps: int
    eval_every: int
    patience_evals: int
    target_mse: float = LABEL_NOISE_VARIANCE
    min_rel_improvement: float
    step_revision: int
    start: NetworkInit = A2_INIT

    def spec_config(self) -> dict[str, Any]:
        """The cell's key: every field, except ``start`` at :data:`A2_INIT`, so that the cells
        trained before the initialization was a field keep their key (and their meaning: it was
        the only one)."""
        return {"kind": type(self).__name__} | _fields(self)

    def train_config(self) -> TrainConfig:
        """The A.2 :class:`~monosem.train.TrainConfig` of this network."""
        return a2_config(self.activation, min_steps=self.min_steps, max_steps=self.max_steps, batch=self.batch,
                         eval_every=self.eval_every, patience_evals=self.patience_evals, target_mse=self.target_mse, lr=self.lr,
                         final_lr_ratio=self.final_lr / self.lr, min_rel_improvement=self.min_rel_improvement,
                         step_revision=self.step_revision)


@dataclass(frozen=True, kw_only=True)
class MixtureSpec:
    """A mixture-of-experts cell: ``n_experts`` experts of the network's width and activation,
    trained under its protocol, with the router's load-balancing weight (the Switch Transformer's)
    and initial scale. A mixture trains through autograd: its network's ``step_revision`` is not
    read (it is 1)."""

    network: NetworkSpec
    n_experts: int
    aux_weight: float = AUX_WEIGHT
    router_scale: float = ROUTER_SCALE


@dataclass(frozen=True, kw_only=True)
class SolverSpec:
    """A kernel cell's solver: ridge (Appendix A.2: "Exact kernel solves ... include a ridge
    parameter of 10^-6"), the size from which EigenPro replaces the exact solve, its target
    training MSE (the label-noise variance) and iteration limit (A.2 names none: at most 200
    epochs, our choice), and the EigenPro revision when the cell may run EigenPro (``None``
    otherwise). The precision is the data's."""

    ridge: float = 1e-6
    exact_max_n: int
    target_mse: float = LABEL_NOISE_VARIANCE
    max_iter: int = 200
    eigenpro_revision: int | None = None

    def kwargs(self, seed: int, dtype: str) -> dict[str, Any]:
        """The regressors' solver arguments (:class:`~monosem.kernels.LaplaceKernelRegressor`)."""
        return {"ridge": self.ridge, "exact_max_n": self.exact_max_n, "target_mse": self.target_mse, "max_iter": self.max_iter,
                "dtype": dtype, "random_state": seed}


@dataclass(frozen=True)
class KernelSpec:
    """A kernel cell: its bandwidth rule, its solver and (RFM) the AGOP's sample count."""

    bandwidth: str
    solver: SolverSpec
    agop_samples: int | None = None


@dataclass(frozen=True, kw_only=True)
class GatedSpec:
    """An MLP-gated cell (Section 3.3): its local kernels, the K-means restarts and iterations of
    its gates (8 and 30), and the ReLU network (trained on the cell's data) whose contribution
    profiles route the points."""

    local: KernelSpec
    n_init: int = 8
    max_iter: int = 30
    source: NetworkSpec


#: the fields every data spec has: a cell's coordinates in its sweep
DATA_FIELDS = ("K", "n", "run")


def data_config(data: Any) -> dict[str, Any]:
    """A cell's data as its key holds it: every field of a :class:`DataSpec` (the mixed-link model,
    the kind every sweep of Section 3 uses, named by its fields alone), or the data spec's name and
    every field for any other kind (a question's own frozen dataclass with ``K``, ``n`` and
    ``run``)."""
    if not dataclasses.is_dataclass(data) or isinstance(data, type) or not data.__dataclass_params__.frozen:
        raise TypeError(f"a cell's data is a frozen dataclass instance, got {type(data).__name__}")
    missing = [f for f in DATA_FIELDS if not hasattr(data, f)]
    if missing:
        raise TypeError(f"a cell's data needs the fields {list(DATA_FIELDS)}; {type(data).__name__} lacks {missing}")
    fields = _as_json(dataclasses.asdict(data))
    return fields if isinstance(data, DataSpec) else {"kind": type(data).__name__} | fields


def spec_config(spec: Any) -> dict[str, Any] | None:
    """A method's spec as its key holds it: the dataclass's name and every field (nested specs
    too), or ``None`` for a method without settings of its own. A spec that spells its own key
    (a method ``spec_config()`` returning ``{"kind": ..., field: value, ...}``: one class whose
    instances key the cells of several methods) is keyed by that."""
    if spec is None:
        return None
    if not dataclasses.is_dataclass(spec) or isinstance(spec, type):
        raise TypeError(f"a cell's spec is a frozen dataclass instance or None, got {type(spec).__name__}")
    own = getattr(spec, "spec_config", None)
    if callable(own):
        return _as_json(own())
    return {"kind": type(spec).__name__} | _as_json(_fields(spec))


def _fields(value: Any) -> Any:
    """``dataclasses.asdict``, except that a network at :data:`A2_INIT` (here or nested in a
    mixture's or a gated cell's spec) has no ``start`` (:meth:`NetworkSpec.spec_config`)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: _fields(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, NetworkSpec) and value.start == A2_INIT:
            del out["start"]
        return out
    if isinstance(value, (list, tuple)):
        return type(value)(_fields(v) for v in value)
    if isinstance(value, dict):
        return {k: _fields(v) for k, v in value.items()}
    return value


def _as_json(value: Any) -> Any:
    """A configuration as its result file holds it: tuples are JSON lists (the key, a hash of the
    JSON text, is the same either way; the stored configuration must compare equal to it)."""
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_json(v) for v in value]
    return value


def network_of(job) -> NetworkSpec | None:
    """The network of a network cell (an MLP, or a mixture's experts), ``None`` for any other cell."""
    spec = job.spec
    if isinstance(spec, MixtureSpec):
        return spec.network
    return spec if isinstance(spec, NetworkSpec) else None


def width_of(job) -> int | None:
    """The width of a network cell (an MLP, or a mixture's experts), ``None`` for any other cell."""
    net = network_of(job)
    return None if net is None else net.width
