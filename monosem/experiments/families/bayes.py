"""The Bayes predictor of the mixed-link model (eq. 6): E[y | x] under the true model, the floor
every method of Section 3 is drawn against; it reads only the data."""

from __future__ import annotations

from typing import Any

import torch

from ..cache import Job, ResultCache
from ..methods import cluster_args, dataset, metrics
from ..registry import register_method

__all__ = ["BAYES", "compute_bayes"]

BAYES = "bayes"


def compute_bayes(job: Job, cache: ResultCache | None = None) -> dict[str, Any]:
    model, _, (Xte, yte, cte) = dataset(job, torch.float64)
    pred = model.bayes(Xte)
    excess = float(((pred - model.f_star(Xte, cte)) ** 2).mean())
    return metrics(pred.numpy(), yte, **cluster_args(job, cte)) | {"overlap_excess": excess}


def _params(P, se) -> None:
    return None


register_method(BAYES, params=_params, compute=compute_bayes, style=dict(color="black", ls=":", label="Bayes"))
