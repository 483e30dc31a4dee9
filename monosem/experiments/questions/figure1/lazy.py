"""Is Figure 1's specialization a feature-learning phenomenon? (Section 3.1, Appendix A.1.) Page
03's two live ablations of the initialization, both from the zero-readout reading (PyTorch's hidden initialization, a = 0:
the initialization of Lemma 9), first seed:

* the **lazy regime** (Chizat et al.): the output multiplied by alpha and Adam's learning rate
  divided by alpha, so that the function moves as fast while every weight moves alpha times less;
  how far the first layer moves (:func:`relative_movement`) and what becomes of the table;
* the **small initialization**: the hidden initialization times a factor, deeper in the
  feature-learning regime.

Both are readings (:class:`~.base.Reading`) trained by :func:`~.base.train_figure1`: the lazy
regime sets ``output_scale``, the small initialization ``hidden_scale``. The readings ablation
(which initialization matches the paper's table, recorded) is :mod:`.readings`.
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd
import torch

from ....data import figure1_model
from ....models import MLP, init_parameters
from ....profiles import SpecializationSizes
from ....specialization import specialization_table
from .base import READINGS, Figure1Run, Reading, train_figure1

__all__ = ["relative_movement", "ScaledRun", "ablation_reading", "ablation_references", "lazy_ablation", "lazy_ablation_frame", "small_init_runs",
           "small_init_frame", "regime_numbers"]


def relative_movement(model: MLP) -> float:
    """||W - W_0||_F / ||W_0||_F: how far the first layer moved from its initialization
    (recomputed from the model's seed). Small in the lazy (kernel) regime."""
    W0 = init_parameters(model.d, model.width, model.activation, model.seed, hidden_scale=model.hidden_scale,
                         init=model.init, dtype=torch.float64)["W"].to(model.W.device)
    W = model.W.detach().double()
    return float((W - W0).norm() / W0.norm())


class ScaledRun(NamedTuple):
    """One network of the lazy-regime ablation: its activation, output scale alpha, the trained
    network (first seed) and its test MSE."""

    activation: str
    alpha: float
    model: MLP
    test_mse: float


def ablation_reading(sizes: SpecializationSizes, **changes) -> Reading:
    """The starting point of page 03's two initialization ablations: the zero-readout reading
    (``READINGS[0]``, PyTorch's hidden initialization, a = 0: Lemma 9's) at ``sizes``, first seed
    only, with ``changes``."""
    return READINGS[0].at(sizes, seeds=tuple(sizes.seeds[:1]), **changes)


def ablation_references(sizes: SpecializationSizes, *, data=None, device: str | torch.device | None = None) -> dict[str, Figure1Run]:
    """Every activation of either ablation under :func:`ablation_reading`, unchanged."""
    acts = dict.fromkeys(sizes.ablation_activations + sizes.small_init_activations)
    return {act: train_figure1(ablation_reading(sizes), act, data=data, device=device) for act in acts}


def lazy_ablation(sizes: SpecializationSizes, references: dict[str, Figure1Run], *, data=None,
                  device: str | torch.device | None = None) -> list[ScaledRun]:
    """The lazy-training ablation (Chizat et al.): each of ``sizes.ablation_activations`` at
    alpha = 1 (its reference run, :func:`ablation_references`) and at every output scale of
    ``sizes.lazy_output_scales``, the learning rate divided by alpha; first seed, zero readout."""
    out = []
    for act in sizes.ablation_activations:
        out.append(ScaledRun(act, 1.0, references[act].models[0], references[act].test_mse[0]))
        for alpha in sizes.lazy_output_scales:
            run = train_figure1(ablation_reading(sizes, output_scale=alpha), act, data=data, device=device)
            out.append(ScaledRun(act, alpha, run.models[0], run.test_mse[0]))
    return out


def _ablation_columns(net: MLP, err: float, row) -> dict:
    """The columns both ablation tables share, for one branch's :class:`SpecializationRow`."""
    return {"test MSE": err, "active": f"{row.n_active} / {net.width}", "A ≥ .71 %": 100 * row.frac_A071,
            "A ≥ .90 %": 100 * row.frac_A090, "D > 2 %": 100 * row.frac_D2}


def lazy_ablation_frame(ablation: list[ScaledRun]) -> pd.DataFrame:
    """:func:`lazy_ablation` as a table indexed by (network, alpha): how far the first layer moved
    (:func:`relative_movement`), the test MSE and the specialization columns (percent; the first
    branch of a gated network)."""
    directions = figure1_model().directions
    rows = [{"network": r.activation, "alpha": r.alpha, "moved ‖W−W₀‖/‖W₀‖": relative_movement(r.model)}
            | _ablation_columns(r.model, r.test_mse, specialization_table(r.model, directions)[0]) for r in ablation]
    return pd.DataFrame(rows).set_index(["network", "alpha"])


def small_init_runs(sizes: SpecializationSizes, *, data=None, device: str | torch.device | None = None) -> dict[str, Figure1Run]:
    """The small-initialization ablation: each of ``sizes.small_init_activations`` with its hidden
    initialization times ``sizes.small_init_scale``; first seed, zero readout."""
    reading = ablation_reading(sizes, hidden_scale=sizes.small_init_scale)
    return {act: train_figure1(reading, act, data=data, device=device) for act in sizes.small_init_activations}


def small_init_frame(references: dict[str, Figure1Run], small: dict[str, Figure1Run]) -> pd.DataFrame:
    """The small-initialization ablation as a table indexed by (branch, hidden init): every branch
    at PyTorch's scale (``references``) and at the small one (``small``), test MSE and the
    specialization columns (percent)."""
    directions = figure1_model().directions
    rows = []
    for act, run in small.items():
        for scale, net, err in ((1.0, references[act].models[0], references[act].test_mse[0]),
                                (run.hidden_scale, run.models[0], run.test_mse[0])):
            rows += [{"branch": row.branch, "hidden init": f"× {scale:g}"} | _ablation_columns(net, err, row)
                     for row in specialization_table(net, directions)]
    return pd.DataFrame(rows).set_index(["branch", "hidden init"])


def regime_numbers(ablation: list[ScaledRun]) -> dict[str, str]:
    """The numbers page 03's remarks quote about the lazy ablation, by glue name: the ReLU network
    at alpha = 1 (``rich_*``) and at the largest alpha (``lazy_*``), how far its first layer
    moved, its test MSE and its % of active neurons with A_j >= 0.71."""
    relu = [r for r in ablation if r.activation == "relu"]
    directions = figure1_model().directions
    out = {}
    for tag, r in (("rich", relu[0]), ("lazy", relu[-1])):
        out |= {f"{tag}_moved": f"{100 * relative_movement(r.model):.0f} %", f"{tag}_mse": f"{r.test_mse:.3g}",
                f"{tag}_a71": f"{100 * specialization_table(r.model, directions)[0].frac_A071:.1f} %"}
    return out
