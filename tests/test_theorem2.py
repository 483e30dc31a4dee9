"""Theorem 2 (Section 4.2, Appendix B.2): Lemmas 10-17 checked against independent computations."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
import torch

import monosem.theory as T
from monosem import data


# ------------------------------------------------------------------------------------ Lemma 10
@pytest.mark.parametrize("K,R", [(1, 1.0), (3, 1.0), (5, 1.0), (4, 0.5), (3, 2.5)])
def test_exact_specialized_mlp_equals_f_star(K, R):
    net = T.exact_specialized_mlp(K, R)
    x, y, c = data.noiseless_routing_mixture(K, R).sample(4000, seed=7, dtype=torch.float64)
    assert net.width == 2 * K
    assert float((net(x) - y).abs().max()) < 1e-12
    balanced = net.balanced()
    assert float((balanced(x) - y).abs().max()) < 1e-12
    budget = K * (1 + math.sqrt(1 + R**-2))
    assert net.path_norm == pytest.approx(budget, rel=1e-14)
    assert balanced.frobenius_sq() == pytest.approx(budget, rel=1e-14)
    # balanced: |a_j| = ||w_j||, and the Frobenius norm equals the path norm (AM-GM with equality)
    torch.testing.assert_close(balanced.a.abs(), balanced.W.norm(dim=1))
    assert balanced.frobenius_sq() <= net.frobenius_sq() + 1e-12


def test_theorem2_budget_fits():
    for K in (1, 2, 10, 100):
        assert T.frobenius_budget(K, 1.0) == pytest.approx(K * (1 + math.sqrt(2)))
        assert T.frobenius_budget(K, 1.0) <= 3 * K
    # Lemma 11 at B = 3K, R = 1 is 48 K sqrt((K+1)/n) <= 48 sqrt(2) K^{3/2} / sqrt(n)
    for K in (1, 4, 16):
        for n in (10, 1000):
            b = T.mlp_risk_upper_bound(n, K)
            assert b == pytest.approx(48 * K * math.sqrt((K + 1) / n))
            assert b <= T.THEOREM2_CONSTANT * K**1.5 / math.sqrt(n) + 1e-12


# ------------------------------------------------------------------------------------ Lemma 11
def test_rademacher_estimate_below_bound():
    x, _, _ = data.noiseless_routing_mixture(3).sample(60, seed=1, dtype=torch.float64)
    out = T.rademacher_atoms_mc(x, n_signs=100, restarts=4, steps=30)
    assert 0 < out["estimate"] <= out["intermediate"] + 3 * out["se"]
    assert out["intermediate"] <= out["bound"] * 1.05  # Jensen: E||sum eps x|| <= (sum ||x||^2)^{1/2}
    assert out["bound"] == pytest.approx(T.rademacher_bound(x))


# ------------------------------------------------------------------------------------ Lemma 12
def test_ground_truth_agop_formula():
    M = T.ground_truth_agop(4)
    alpha = T.clipped_ramp_moments()["alpha"]
    assert alpha == pytest.approx(0.5 * math.erf(1 / math.sqrt(2)))
    assert torch.allclose(M[:4], torch.zeros(4, 8, dtype=torch.float64))
    torch.testing.assert_close(M[4:, 4:], alpha / 4 * torch.eye(4, dtype=torch.float64))


def test_empirical_agop_converges():
    """Frobenius error shrinks like n^{-1/2}: 16x more samples cut it by about 4."""
    K = 3
    M = T.ground_truth_agop(K)
    errs = [float((T.empirical_agop(K, n, seed=s) - M).norm()) for n in (2_000, 32_000) for s in range(3)]
    small, large = np.mean(errs[:3]), np.mean(errs[3:])
    assert large < small / 2
    # the expected squared error is sum of entry variances: at n = 32 000 well below 0.01
    assert large < 0.01


def test_agop_bayes_risk_matches_lower_bound():
    for K in (2, 5):
        mean, se = T.agop_bayes_risk_mc(K, 100_000, seed=3)
        assert abs(mean - T.agop_bayes_lower_bound(K)) < 4 * se


# ------------------------------------------------------------------------------------ Lemma 13
def test_hermite_closed_form_equals_quadrature():
    g = T.clipped_ramp_hermite_coefficients(15)
    for r in range(16):
        assert abs(g[r] - T.clipped_ramp_hermite_quadrature(r)) < 1e-10


def test_hermite_sympy_equals_closed_form():
    g = T.clipped_ramp_hermite_coefficients(12)
    for r in range(2, 13):
        exact = T.clipped_ramp_hermite_exact(r)
        assert sp.simplify(exact - T.lemma13_closed_form_exact(r)) == 0
        assert abs(float(exact) - g[r]) < 1e-14


def test_generating_function_and_parseval():
    assert T.lemma13_generating_function_check(12)
    m = T.clipped_ramp_moments()
    g = T.clipped_ramp_hermite_coefficients(3000)
    assert np.sum(g**2) == pytest.approx(m["second_moment"], abs=2e-6)  # Parseval, tail < 2e-6
    tails = T.hermite_tail(np.arange(0, 200))
    assert np.all(tails > 0) and np.all(np.diff(tails) <= 1e-18)
    assert T.hermite_tail(50) == pytest.approx(T.hermite_tail_direct(50, 200_000), rel=1e-3)
    assert m["second_moment"] == pytest.approx(0.5 - math.exp(-0.5) / math.sqrt(2 * math.pi))
    assert g[0] == pytest.approx(m["mean"]) and g[1] == pytest.approx(m["alpha"])


# ------------------------------------------------------------------------------------ Lemma 14
def test_harmonic_energy_product_equals_sum_exactly():
    for K in range(2, 40):
        for r in range(0, 16):
            assert T.harmonic_energy_exact(r, K) == T.harmonic_energy_sum(r, K)
            assert T.harmonic_energy(r, K) == pytest.approx(float(T.harmonic_energy_exact(r, K)), rel=1e-13)
    assert isinstance(T.harmonic_energy_sum(5, 7), Fraction)


def test_harmonic_dimension_and_energy_direct():
    for K in range(1, 5):
        for r in range(0, 6):
            assert T.harmonic_dimension(r, K) == T.harmonic_dimension_direct(r, K)
            if r + K <= 8:
                assert T.harmonic_energy_direct(r, K) == T.harmonic_energy_exact(r, K)


def test_harmonic_asymptotics():
    for r in (2, 3, 6):
        # H_{r,K} / (K^r / r!) -> 1 and alpha_{r,K} -> 1 as K grows
        assert T.harmonic_dimension(r, 10**6) / (10**6) ** r * math.factorial(r) == pytest.approx(1, rel=1e-4)
        assert 1 - T.harmonic_energy(r, 10**6) < 1e-4
        assert T.harmonic_energy(r, 100) < T.harmonic_energy(r, 1000) < 1


# ------------------------------------------------------------------------------- Lemmas 15-17
def test_invariant_subspace_bound():
    for K, N in [(3, 2), (5, 6)]:
        out = T.invariant_subspace_mc(K, N, 2000, seed=1)
        assert out["v_norm2"] == pytest.approx(T.harmonic_energy(2, K))
        assert out["D"] == T.harmonic_dimension(2, K)
        # invariance makes the bound an equality in expectation (dim S = N < D a.s.)
        assert abs(out["mean"] - out["bound"]) < 4 * out["se"]
    assert T.invariant_subspace_mc(5, 6, 1000, seed=1, anisotropy=5.0)["mean"] < T.invariant_subspace_mc(5, 6, 10)["bound"]


def test_kernel_lower_bound_properties():
    var = T.clipped_ramp_moments()["variance"]
    for K in (2, 3, 8, 50):
        ns = np.array([0, 1, 3, 10, 100, 1e3, 1e5, 1e8])
        lb = T.kernel_lower_bound(ns, K)
        assert np.all(np.diff(lb) <= 1e-15) and np.all(lb >= 0) and np.all(lb <= var)
        assert lb[0] == pytest.approx(sum(
            g**2 * T.harmonic_energy(r, K) for r, g in enumerate(T.clipped_ramp_hermite_coefficients(400)) if r >= 2
        ))
    # the truncation is a lower bound and the tail bounds what it misses
    assert T.kernel_lower_bound(10, 8, r_max=20) <= T.kernel_lower_bound(10, 8, r_max=400)
    assert T.kernel_lower_bound(10, 8, r_max=400) - T.kernel_lower_bound(10, 8, r_max=20) <= T.kernel_lower_bound_tail(20)


def test_lemma17_floor_approached():
    for A in (1, 2, 3):
        floor = T.polynomial_budget_floor(A)
        assert floor == pytest.approx(T.hermite_tail(A))
        lbs = [T.kernel_lower_bound(float(K) ** A, K) for K in (2**6, 2**10, 2**16)]
        assert lbs[0] < lbs[1] < lbs[2] <= floor and lbs[2] > 0.9 * floor
    assert T.polynomial_budget_floor(0.5) == T.polynomial_budget_floor(1)


# -------------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(
    "call",
    [
        lambda: T.clipped_ramp_hermite_coefficients(-1),
        lambda: T.clipped_ramp_hermite_coefficients(2.5),
        lambda: T.harmonic_dimension(2, 0),
        lambda: T.harmonic_energy(-1, 3),
        lambda: T.kernel_lower_bound(10, 1),
        lambda: T.kernel_lower_bound(-1, 4),
        lambda: T.kernel_lower_bound(10, 4, r_max=1),
        lambda: T.exact_specialized_mlp(0),
        lambda: T.exact_specialized_mlp(3, R=-1.0),
        lambda: T.ground_truth_agop(2, R=0.0),
        lambda: T.mlp_risk_upper_bound(100, 4, B=1.0),
        lambda: T.polynomial_budget_floor(-1),
        lambda: T.invariant_subspace_mc(1, 2),
    ],
)
def test_bad_arguments_raise(call):
    with pytest.raises(ValueError):
        call()


def test_public_api_exported():
    for name in (
        "clipped_ramp_hermite_coefficients",
        "harmonic_dimension",
        "harmonic_energy",
        "kernel_lower_bound",
        "exact_specialized_mlp",
        "ground_truth_agop",
    ):
        assert name in T.__all__ and callable(getattr(T, name))
