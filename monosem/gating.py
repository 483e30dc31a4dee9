"""MLP-gated local predictors (Section 3.3, Appendix A.3, Figure 3).

A trained ReLU MLP f(x) = sum_j a_j ReLU(<w_j, x> + b_j) + a_0 is turned into K learned gates:

1. average output-weighted activation m_j = (1/n) sum_i |a_j| ReLU(<w_j, x_i> + b_j)   (eq. 11);
2. active set J: 2-means on log10 m_j, keep the group with the larger mean (the K largest m_j if
   fewer than K survive);
3. contribution profiles p_j(x) = |a_j| ReLU(<w_j, x> + b_j) / sum_{l in J} (...)       (eq. 12);
4. K-means++ on the training profiles (8 initializations, at most 30 Lloyd iterations, the
   solution of smallest inertia) gives K gates with centroids q_c;
5. gate metrics G_c = sum_j q_cj w_j w_j^T / sum_j q_cj                                  (eq. 13)
   and features z_c(x) = G_c^{1/2} x                                                    (eq. 14);
6. one local Laplace or RFM predictor per gate, fitted on the gate's training points in the
   representation z_c (bandwidth: median pairwise distance within the gate; ridge 1e-6; exact
   solves below 11 000 points, EigenPro above; the local RFM starts from that Laplace kernel and
   makes three AGOP updates);
7. a test point is routed by its own contribution profile to the nearest training centroid, mapped
   by that gate's G_c^{1/2}, and predicted by that gate's local model.

Choices the paper leaves open, stated here and on the Section 3.3 page:

* neurons with m_j = 0 (dead on the whole training set) cannot enter a log; they are placed below
  every live neuron before the 2-means, so they are never active;
* an input on which no active neuron fires has an all-zero profile (the ratio is 0/0); it is routed
  to the nearest centroid like any other profile;
* the local RFM's metric updates act on the gate features z_c (the paper fits the local predictor
  "in the resulting representation"), so its final metric in x-space is
  G_c^{1/2} M G_c^{1/2} and keeps the gate's own directions;
* the reported local RFM is its last iteration (3); every iteration's predictions are available
  through ``predict(X, iteration=t)``.

The true clusters are never used to fit the gates; :meth:`MLPGatedRegressor.gate_purity` measures,
after the fact, how well the gates recover them (adjusted Rand index), which the paper does not
report.

Two swaps beyond the paper (page 09, "routing or features?") take the pipeline apart:
``features="isotropic"`` keeps the learned gates but fits every local model on x itself
(G_c = I, so the local Laplace is the per-gate Laplace of the oracle), and ``routing="true"``
routes by the true clusters (training and test) but keeps the learned metrics, computed by eq. 13
with the centroid q_c replaced by the mean contribution profile of cluster c's training points
(what K-means would return were its assignment the true one). With both swaps the predictor is
the per-cluster Laplace oracle.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from .checks import check_choice, check_int
from .kernels import LaplaceKernelRegressor, RFMRegressor

__all__ = ["MLPGatedRegressor", "ROUTINGS", "FEATURES", "contributions", "average_contributions", "active_neurons", "gate_metrics", "psd_sqrt"]

LOCALS = ("laplace", "rfm")
#: where a point's gate comes from: the MLP's contribution profiles (the paper) or the true cluster
ROUTINGS = ("learned", "true")
#: the local representation: z_c = G_c^{1/2} x (the paper, eq. 14) or x itself
FEATURES = ("learned", "isotropic")


def _relu_parts(mlp) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if getattr(mlp, "activation", None) != "relu":
        raise ValueError(f"the gating pipeline needs a ReLU MLP (Appendix A.3); got activation={getattr(mlp, 'activation', None)!r}")
    W = mlp.W.detach().to(torch.float64)
    b = mlp.b.detach().to(torch.float64)
    a = (mlp.a.detach() * float(getattr(mlp, "output_scale", 1.0))).to(torch.float64)
    return W, b, a


def contributions(mlp, X: torch.Tensor, neurons: torch.Tensor | None = None, batch: int = 16_384) -> torch.Tensor:
    """``(n, |J|)`` output-weighted activations |a_j| ReLU(<w_j, x> + b_j) (the terms of eq. 11-12)."""
    W, b, a = _relu_parts(mlp)
    if neurons is not None:
        W, b, a = W[neurons], b[neurons], a[neurons]
    X = torch.as_tensor(X).to(device=W.device, dtype=torch.float64)
    if X.ndim != 2 or X.shape[1] != W.shape[1]:
        raise ValueError(f"X must have shape (n, {W.shape[1]}), got {tuple(X.shape)}")
    out = [torch.relu(torch.addmm(b, X[i : i + batch], W.T)) * a.abs() for i in range(0, X.shape[0], batch)]
    return torch.cat(out) if out else torch.empty(0, W.shape[0], dtype=torch.float64)


def average_contributions(mlp, X: torch.Tensor) -> torch.Tensor:
    """m_j = (1/n) sum_i |a_j| ReLU(<w_j, x_i> + b_j) for every hidden neuron (eq. 11)."""
    return contributions(mlp, X).mean(dim=0)


def active_neurons(m: torch.Tensor, K: int, seed: int = 0) -> torch.Tensor:
    """Indices of the active set J from the average contributions ``m`` (Appendix A.3).

    2-means on log10 m_j keeps the group with the larger mean; if it has fewer than K neurons the
    K largest m_j are kept instead.
    """
    m = torch.as_tensor(m, dtype=torch.float64).cpu()
    K = check_int(K, "K")
    if m.numel() < K:
        raise ValueError(f"the MLP has {m.numel()} neurons, fewer than K={K}")
    live = m > 0
    if int(live.sum()) >= 2:
        logs = torch.full_like(m, 0.0)
        logs[live] = m[live].log10()
        # dead neurons: below every live one, so never in the upper group
        logs[~live] = logs[live].min() - 1.0
        km = KMeans(n_clusters=2, n_init=8, random_state=seed).fit(logs.numpy()[:, None])
        upper = int(np.argmax(km.cluster_centers_[:, 0]))
        keep = torch.from_numpy(np.flatnonzero(km.labels_ == upper))
    else:
        keep = torch.nonzero(live).flatten()
    if keep.numel() < K:
        keep = torch.argsort(m, descending=True)[:K]
    return torch.sort(keep).values


def contribution_profiles(contrib: torch.Tensor) -> torch.Tensor:
    """Normalized contribution profiles p(x) (eq. 12); an all-zero row stays zero."""
    total = contrib.sum(dim=1, keepdim=True)
    return torch.where(total > 0, contrib / total.clamp(min=torch.finfo(contrib.dtype).tiny), torch.zeros_like(contrib))


def gate_metrics(centroids: torch.Tensor, W_active: torch.Tensor) -> torch.Tensor:
    """``(K, d, d)`` gate metrics G_c = sum_j q_cj w_j w_j^T / sum_j q_cj (eq. 13)."""
    q = centroids.clamp(min=0.0)
    num = torch.einsum("cj,jd,je->cde", q, W_active, W_active)
    den = q.sum(dim=1).clamp(min=torch.finfo(q.dtype).tiny)
    return num / den[:, None, None]


def psd_sqrt(G: torch.Tensor) -> torch.Tensor:
    """Symmetric square root of a positive-semidefinite matrix (eigenvalues clipped at 0)."""
    evals, evecs = torch.linalg.eigh((G + G.T) / 2)
    return (evecs * evals.clamp(min=0).sqrt()) @ evecs.T


class MLPGatedRegressor(RegressorMixin, BaseEstimator):
    """Local Laplace / RFM predictors behind gates learned from a trained ReLU MLP (Appendix A.3).

    Parameters
    ----------
    mlp:
        A trained ``monosem.models.MLP`` with ``activation="relu"`` (frozen; never modified).
    local:
        ``"laplace"`` or ``"rfm"``.
    n_gates:
        Number of gates M (the paper uses M = K, the true number of clusters).
    n_init, max_iter:
        K-means++ initializations and Lloyd iterations (8 and 30 in the paper).
    local_params:
        Extra keyword arguments for the local ``LaplaceKernelRegressor`` / ``RFMRegressor``.
    random_state:
        Seed of the two K-means runs and of the local predictors' subsamples.
    routing:
        ``"learned"`` (the paper): gates by K-means on the contribution profiles; ``"true"``: the
        true clusters are the gates (``fit(X, y, clusters=c)``, ``predict(X, gates=c)``), with
        ``n_gates`` = K.
    features:
        ``"learned"`` (the paper): local models on z_c = G_c^{1/2} x; ``"isotropic"``: on x.
    """

    def __init__(self, mlp=None, local: str = "laplace", n_gates: int = 2, *, n_init: int = 8, max_iter: int = 30,
                 local_params: dict[str, Any] | None = None, random_state: int = 0, routing: str = "learned",
                 features: str = "learned") -> None:
        self.mlp = mlp
        self.local = local
        self.n_gates = n_gates
        self.n_init = n_init
        self.max_iter = max_iter
        self.local_params = local_params
        self.random_state = random_state
        self.routing = routing
        self.features = features

    def _check(self) -> None:
        if self.local not in LOCALS:
            check_choice(self.local, "local", LOCALS)
        if self.routing not in ROUTINGS:
            check_choice(self.routing, "routing", ROUTINGS)
        if self.features not in FEATURES:
            check_choice(self.features, "features", FEATURES)
        check_int(self.n_gates, "n_gates")
        _relu_parts(self.mlp)

    def _local_estimator(self):
        params = {"bandwidth": "median", "ridge": 1e-6, "solver": "auto", "random_state": self.random_state}
        params |= self.local_params or {}
        if self.local == "laplace":
            return LaplaceKernelRegressor(**params)
        return RFMRegressor(**{"iterations": 3} | params)

    def gate_features(self, X) -> tuple[torch.Tensor, np.ndarray]:
        """Profiles of ``X`` over the active neurons and their nearest-centroid gates."""
        P = contribution_profiles(contributions(self.mlp, X, self.active_))
        return P, self.kmeans_.predict(P.cpu().numpy())

    def assign(self, X) -> np.ndarray:
        """The gate of every row of ``X``: its contribution profile's nearest training centroid."""
        self._check_fitted()
        if self.routing == "true":
            raise ValueError("routing='true' routes by the true clusters: pass them as gates= to predict")
        return self.gate_features(torch.as_tensor(X).to(torch.float64).to(self.mlp.W.device))[1]

    def fit(self, X, y, clusters=None) -> "MLPGatedRegressor":
        """Learn the gates from the MLP on the training inputs ``X`` and fit one local model per gate.

        ``clusters``: the true cluster of every row (needed with ``routing="true"`` only)."""
        self._check()
        X = torch.as_tensor(X).to(torch.float64)
        y = torch.as_tensor(y).to(torch.float64)
        if X.ndim != 2 or y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"X must be (n, d) and y (n,) with the same n; got {tuple(X.shape)} and {tuple(y.shape)}")
        if X.shape[1] != self.mlp.W.shape[1]:
            raise ValueError(f"X has shape {tuple(X.shape)}: {X.shape[1]} features, the MLP takes {self.mlp.W.shape[1]}")
        for name, t in (("X", X), ("y", y)):
            if not bool(torch.isfinite(t).all()):
                raise ValueError(f"{name} holds NaN or infinite values")
        if X.shape[0] < self.n_gates:
            raise ValueError(f"need at least n_gates={self.n_gates} training points, got {X.shape[0]}")
        W, _, _ = _relu_parts(self.mlp)
        X = X.to(W.device)
        self.neuron_mass_ = average_contributions(self.mlp, X).cpu()
        self.active_ = active_neurons(self.neuron_mass_, self.n_gates, self.random_state).to(W.device)
        P = contribution_profiles(contributions(self.mlp, X, self.active_)).cpu().numpy()
        if self.routing == "true":
            if clusters is None:
                raise ValueError("routing='true' needs the true clusters: fit(X, y, clusters=c)")
            gates = self._check_gates(np.asarray(torch.as_tensor(clusters).cpu()), X.shape[0])
            # the centroid of each true cluster in profile space (eq. 13's q_c for that gate)
            centroids = torch.from_numpy(np.stack([P[gates == c].mean(axis=0) if (gates == c).any() else np.zeros(P.shape[1])
                                                   for c in range(self.n_gates)])).to(W.device, torch.float64)
        else:
            self.kmeans_ = KMeans(n_clusters=self.n_gates, init="k-means++", n_init=self.n_init, max_iter=self.max_iter,
                                  random_state=self.random_state).fit(P)
            gates = self.kmeans_.labels_
            centroids = torch.from_numpy(self.kmeans_.cluster_centers_).to(W.device, torch.float64)
        self.gate_metrics_ = gate_metrics(centroids, W[self.active_]).cpu()
        if self.features == "isotropic":
            self.gate_sqrt_ = torch.eye(X.shape[1], dtype=torch.float64).expand(self.n_gates, -1, -1).clone()
        else:
            self.gate_sqrt_ = torch.stack([psd_sqrt(G) for G in self.gate_metrics_])
        self.train_gates_ = gates
        self.estimators_ = []
        Xc, yc = X.cpu(), y.cpu()
        for c in range(self.n_gates):
            idx = torch.from_numpy(np.flatnonzero(gates == c))
            Z = Xc[idx] @ self.gate_sqrt_[c]
            self.estimators_.append(self._local_estimator().fit(Z, yc[idx]) if idx.numel() else None)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X, iteration: int | None = None, gates: np.ndarray | None = None) -> np.ndarray:
        """Route every row of ``X`` by its contribution profile and predict with its gate's model.

        ``iteration`` picks an RFM iteration (0-3) of the local RFMs (default: the last);
        ``gates`` are the rows' gates when already known (:meth:`assign`).
        """
        self._check_fitted()
        X = torch.as_tensor(X).to(torch.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must be (n, {self.n_features_in_}), got {tuple(X.shape)}")
        gates = self.assign(X) if gates is None else self._check_gates(gates, X.shape[0])
        out = np.zeros(X.shape[0])
        Xc = X.cpu()
        for c in range(self.n_gates):
            idx = np.flatnonzero(gates == c)
            if idx.size == 0:
                continue
            est = self.estimators_[c]
            if est is None:  # an empty gate (K-means never leaves one, kept for safety)
                continue
            Z = Xc[torch.from_numpy(idx)] @ self.gate_sqrt_[c]
            out[idx] = est.predict(Z, iteration=iteration) if self.local == "rfm" else est.predict(Z)
        return out

    def _check_fitted(self) -> None:
        if not hasattr(self, "estimators_"):
            raise ValueError("this MLPGatedRegressor is not fitted yet: call fit(X, y) first")

    def _check_gates(self, gates, n: int) -> np.ndarray:
        gates = np.asarray(gates)
        if gates.shape != (n,) or not np.issubdtype(gates.dtype, np.integer):
            raise ValueError(f"gates must be {n} integers (one per row of X), got shape {gates.shape} of {gates.dtype}")
        if n and (gates.min() < 0 or gates.max() >= self.n_gates):
            raise ValueError(f"gates must lie in [0, {self.n_gates - 1}] (n_gates={self.n_gates}), got [{gates.min()}, {gates.max()}]")
        return gates

    def gate_purity(self, X, clusters, gates: np.ndarray | None = None) -> float:
        """Adjusted Rand index between the learned gates of ``X`` and the true clusters."""
        self._check_fitted()
        gates = self.assign(X) if gates is None else self._check_gates(gates, len(X))
        return float(adjusted_rand_score(np.asarray(torch.as_tensor(clusters).cpu()), gates))
