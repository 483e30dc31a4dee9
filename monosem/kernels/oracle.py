"""Per-cluster oracles (Appendix A.2, "Per-cluster oracle methods").

The oracle is given the true cluster of every training *and* test point: it fits one independent
copy of an estimator on each cluster's training data and predicts each test point with the copy
of its own cluster. It is a diagnostic reference, not a deployable predictor. With one cluster it
is the global estimator itself.
"""

from __future__ import annotations

import inspect

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

    def fit(self, X, y, groups) -> "PerClusterOracle":
        """Fit one clone of the estimator on each cluster's training examples."""
        if self.estimator is None:
            raise ValueError("estimator must be given, e.g. PerClusterOracle(LaplaceKernelRegressor())")
        if groups is None:
            raise ValueError("PerClusterOracle.fit needs the true cluster labels: fit(X, y, groups)")
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
            self.estimators_[int(k)] = est.fit(X[sel], y[sel], **kwargs)
        self.n_features_in_ = X.shape[1]
        self.clusters_ = np.array(sorted(self.estimators_))
        return self

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
