"""The landscape of the signed correlation Psi_zeta = zeta Phi on the sphere (Lemmas 4-6).

* :func:`one_cluster_critical_t` -- the unique root t* in (0, R) of Lemma 5's quartic
  t^4 - (R^2 + 4) t^2 + R^2 = 0, so that b* = -tau zeta t*.
* :func:`specialized_maximizer` -- omega* = tau sqrt(1 - b*^2/R^2) v_c + (b*/R^2) mu_c (Lemma 5).
* :func:`positive_critical_points` -- the finite set of positive critical points of Lemma 6:
  s active clusters with equal |b_c| = sqrt(beta_s), s beta (4 - beta) = R^2 (1 - beta),
  rho_c^2 = 3 beta / (R^2 (1 - beta)) and sign(b_c) = -zeta sign(rho_c).

Clusters are numbered from 0 (the paper numbers them from 1); coordinates follow
``monosem.data.symmetric_mixture``: routing block first (mu_c = R e_c), predictive block second
(v_c = e_{K+c}).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..checks import check_int
from .correlation import _check_K, _check_R

__all__ = [
    "one_cluster_critical_t",
    "critical_b_squared",
    "specialized_maximizer",
    "specialized_value",
    "CriticalPoint",
    "positive_critical_points",
    "two_cluster_slice",
]


def _check_sign(value: int, name: str) -> int:
    if value not in (1, -1) or isinstance(value, bool):
        raise ValueError(f"{name}={value!r} must be +1 or -1")
    return int(value)


def critical_b_squared(s: int, R: float) -> float:
    """beta = b_c^2 at a positive critical point with ``s`` active clusters (Lemma 6).

    The unique root in (0, 1) of s beta (4 - beta) = R^2 (1 - beta), i.e. of
    s beta^2 - (4 s + R^2) beta + R^2 = 0; written as R^2 / (larger root) to avoid cancellation.
    For s = 1 it is t*^2 of Lemma 5.
    """
    R = _check_R(R)
    s = check_int(s, "s", what="the number of active clusters")
    p = 4.0 * s + R * R
    larger = (p + math.sqrt(p * p - 4.0 * s * R * R)) / (2.0 * s)
    return R * R / (s * larger)


def one_cluster_critical_t(R):
    """t* of Lemma 5: the unique root in (0, R) of t^4 - (R^2 + 4) t^2 + R^2 = 0.

    t*^2 = (R^2 + 4 - sqrt(R^4 + 4 R^2 + 16)) / 2 = 1 + O(R^-2). Accepts a number or an array of
    positive R (returns the same shape).
    """
    arr = np.asarray(R, dtype=np.float64)
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"R={R!r} must be positive and finite (the cluster separation)")
    r2 = arr * arr
    # the smaller root of the quadratic in t^2, as (product of roots) / (larger root)
    t = np.sqrt(2.0 * r2 / (r2 + 4.0 + np.sqrt(r2 * r2 + 4.0 * r2 + 16.0)))
    return float(t) if np.ndim(R) == 0 else t


def specialized_maximizer(c: int, tau: int, zeta: int, K: int, R: float) -> np.ndarray:
    """omega*(c, tau, zeta) of Lemma 5, a unit vector in R^{2K} (float64).

    omega* = tau sqrt(1 - b*^2/R^2) v_c + (b*/R^2) mu_c with b* = -tau zeta t*: the strict local
    (and global) maximizer of Psi_zeta on the one-cluster branch of cluster ``c`` (0-based) with
    orientation ``tau``. It obeys omega* = tau v_c - (tau zeta / R^2) mu_c + O(R^-2).
    """
    K, R = _check_K(K), _check_R(R)
    tau, zeta = _check_sign(tau, "tau"), _check_sign(zeta, "zeta")
    c = check_int(c, "c", 0, K - 1, what="a cluster index")
    t = one_cluster_critical_t(R)
    b = -tau * zeta * t
    omega = np.zeros(2 * K)
    omega[c] = b / R  # (b*/R^2) mu_c with mu_c = R e_c
    omega[K + c] = tau * math.sqrt(max(0.0, 1.0 - (b / R) ** 2))
    return omega


def specialized_value(K: int, R: float) -> float:
    """Psi_zeta(omega*) = t* phi(t*) (1 - t*^2/R^2)^{3/2} / (K sqrt 6), the same for every c, tau, zeta."""
    K, R = _check_K(K), _check_R(R)
    t = one_cluster_critical_t(R)
    return t * math.exp(-0.5 * t * t) / math.sqrt(2 * math.pi) * (1 - t * t / (R * R)) ** 1.5 / (K * math.sqrt(6))


@dataclass(frozen=True)
class CriticalPoint:
    """A positive critical point of Psi_zeta (Lemma 6): its direction, active clusters and signs."""

    omega: np.ndarray
    active: tuple[int, ...]
    signs: tuple[int, ...]  # sign(rho_c) for each active cluster

    @property
    def s(self) -> int:
        """Number of active clusters (1: a specialized maximum; >= 2: a strict saddle, Lemma 4)."""
        return len(self.active)


def positive_critical_points(K: int, R: float, zeta: int, s: int | None = None) -> list[CriticalPoint]:
    """All positive critical points of Psi_zeta with ``s`` active clusters (all s = 1..K if None).

    Lemma 6: inactive clusters have b_c = rho_c = 0; active ones share |b_c| = sqrt(beta_s)
    (:func:`critical_b_squared`), rho_c^2 = 3 beta_s / (R^2 (1 - beta_s)), and (from eq. 16b with
    lambda > 0) sign(b_c) = -zeta sign(rho_c). One point per active set and sign pattern:
    sum_s C(K, s) 2^s = 3^K - 1 points in all.
    """
    K, R = _check_K(K), _check_R(R)
    zeta = _check_sign(zeta, "zeta")
    sizes = range(1, K + 1) if s is None else [s]
    out: list[CriticalPoint] = []
    for size in sizes:
        check_int(size, "s", 1, K, what="active clusters, at most K")
        beta = critical_b_squared(size, R)
        b_abs, rho_abs = math.sqrt(beta), math.sqrt(3.0 * beta / (R * R * (1.0 - beta)))
        for active in itertools.combinations(range(K), size):
            for signs in itertools.product((1, -1), repeat=size):
                omega = np.zeros(2 * K)
                for c, tau in zip(active, signs):
                    omega[c] = -zeta * tau * b_abs / R
                    omega[K + c] = tau * rho_abs
                out.append(CriticalPoint(omega=omega, active=active, signs=tuple(signs)))
    return out


def two_cluster_slice(K: int, R: float, psi: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Unit directions on a 2-cluster slice of the sphere, for pictures of the landscape (Lemmas 4-6).

    omega(psi, b): b_0 = b cos psi, b_1 = b sin psi (routing), rho_0 = sqrt(1 - b^2/R^2) cos psi,
    rho_1 = sqrt(1 - b^2/R^2) sin psi (predictive), every other coordinate 0. psi = 0 and pi/2 are
    the one-cluster branches of clusters 0 and 1 (the maxima omega* sit at b = -zeta t*); psi = pi/4
    is the symmetric circle b_0 = b_1, rho_0 = rho_1, invariant under the flow, whose maximum is the
    two-cluster saddle of Lemma 6 (at b = -zeta sqrt(2 beta_2)). Returns shape ``psi.shape + (2K,)``
    after broadcasting ``psi`` against ``b``; requires |b| < R.
    """
    K, R = _check_K(K), _check_R(R)
    if K < 2:
        raise ValueError(f"K={K} must be >= 2 for a two-cluster slice")
    psi, b = np.broadcast_arrays(np.asarray(psi, dtype=np.float64), np.asarray(b, dtype=np.float64))
    if np.any(np.abs(b) >= R):
        raise ValueError(f"|b| must be < R={R}")
    out = np.zeros(psi.shape + (2 * K,))
    r = np.sqrt(1.0 - (b / R) ** 2)
    out[..., 0], out[..., 1] = b * np.cos(psi) / R, b * np.sin(psi) / R
    out[..., K], out[..., K + 1] = r * np.cos(psi), r * np.sin(psi)
    return out
