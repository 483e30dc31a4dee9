"""Per-cluster oracles (Appendix A.2, "Per-cluster oracle methods").

The oracle is given the true cluster of every training *and* test point: it fits one independent
copy of an estimator on each cluster's training data and predicts each test point with the copy
of its own cluster. It is a diagnostic reference, not a deployable predictor. With one cluster it
is the global estimator itself.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin, clone

from ..device import get_device
from .inputs import as_groups, as_matrix, as_vector

__all__ = ["PerClusterOracle"]


def _accepts(method, name: str) -> bool:
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


class PerClusterOracle(RegressorMixin, BaseEstimator):
    """One clone of ``estimator`` per true cluster, routed by the true cluster at test time.

    ``fit(X, y, groups)`` and ``predict(X, groups)`` need the cluster labels. Extra keyword
    arguments of :meth:`predict` (e.g. ``iteration=`` of an :class:`RFMRegressor`) are passed on.
    """

    def __init__(self, estimator=None) -> None:
        self.estimator = estimator

    def fit(self, X, y, groups, *, checkpoint: str | os.PathLike | None = None) -> "PerClusterOracle":
        """Fit one clone of the estimator on each cluster's training examples.

        ``checkpoint``: a path prefix; cluster ``k``'s fit checkpoints to ``<checkpoint>-<k>.pt``
        (for an estimator whose ``fit`` takes a ``checkpoint``, e.g. :class:`RFMRegressor`: a
        finished cluster restores from its file, an interrupted one resumes after its last
        finished iteration, with the same result, bit for bit). :meth:`checkpoint_files` lists
        them, to remove once the fit is used.
        """
        if self.estimator is None:
            raise ValueError("estimator must be given, e.g. PerClusterOracle(LaplaceKernelRegressor())")
        if groups is None:
            raise ValueError("PerClusterOracle.fit needs the true cluster labels: fit(X, y, groups)")
        if checkpoint is not None and not _accepts(self.estimator.fit, "checkpoint"):
            raise ValueError(f"checkpoint: {type(self.estimator).__name__}.fit takes no checkpoint; pass checkpoint=None")
        dev = get_device(getattr(self.estimator, "device", None))
        X = as_matrix(X, "X", dev, torch.float64)
        y = as_vector(y, "y", X.shape[0], dev, torch.float64)
        g = as_groups(groups, X.shape[0], dev)
        pass_groups = _accepts(self.estimator.fit, "groups")
        self.estimators_: dict[int, BaseEstimator] = {}
        for k in torch.unique(g).tolist():
            sel = g == k
            est = clone(self.estimator)
            kwargs = {"groups": g[sel]} if pass_groups else {}
            if checkpoint is not None:
                kwargs["checkpoint"] = self._checkpoint_file(checkpoint, int(k))
            self.estimators_[int(k)] = est.fit(X[sel], y[sel], **kwargs)
        self.n_features_in_ = X.shape[1]
        self.clusters_ = np.array(sorted(self.estimators_))
        return self

    @staticmethod
    def _checkpoint_file(prefix: str | os.PathLike, cluster: int) -> Path:
        prefix = Path(prefix)
        return prefix.with_name(f"{prefix.name}-{cluster}.pt")

    def checkpoint_files(self, checkpoint: str | os.PathLike) -> list[Path]:
        """The checkpoint files a fit with ``checkpoint`` wrote, one per cluster (some may be absent)."""
        if not hasattr(self, "estimators_"):
            return []
        return [self._checkpoint_file(checkpoint, k) for k in self.estimators_]

    def predict(self, X, groups, **predict_params) -> np.ndarray:
        """Predict every row with the fitted copy of its true cluster."""
        if not hasattr(self, "estimators_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("This PerClusterOracle instance is not fitted yet; call fit(X, y, groups) first.")
        if groups is None:
            raise ValueError("PerClusterOracle.predict needs the true cluster labels: predict(X, groups)")
        dev = get_device(getattr(self.estimator, "device", None))
        X = as_matrix(X, "X", dev, torch.float64, self.n_features_in_)
        g = as_groups(groups, X.shape[0], dev)
        unseen = sorted(set(torch.unique(g).tolist()) - set(self.estimators_))
        if unseen:
            raise ValueError(f"groups contains clusters {unseen} that had no training examples")
        out = np.empty(X.shape[0])
        for k, est in self.estimators_.items():
            sel = g == k
            if bool(sel.any()):
                out[sel.cpu().numpy()] = est.predict(X[sel], **predict_params)
        return out

    def score(self, X, y, groups) -> float:
        """R^2 of the routed predictions."""
        from sklearn.metrics import r2_score

        return float(r2_score(np.asarray(y.cpu() if hasattr(y, "cpu") else y), self.predict(X, groups)))
