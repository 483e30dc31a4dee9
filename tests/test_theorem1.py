"""Theorem 1 (Section 4.1, Appendix B.1): closed forms, landscape, flows, coverage, SymPy checks."""

import itertools
import math

import numpy as np
import pytest
import torch

from monosem.data import symmetric_mixture
from monosem.theory import (
    coverage_lower_bounds,
    coverage_probability,
    lemma3_checks,
    lemma4_checks,
    lemma5_checks,
    lemma6_checks,
    nearest_direction,
    one_cluster_critical_t,
    population_correlation,
    positive_critical_points,
    random_directions,
    specialized_maximizer,
    specialized_value,
    spherical_gradient,
    spherical_hessian,
    teacher_only_flow,
    tracking_error,
    two_layer_population_flow,
)


# ------------------------------------------------------------------------------ Lemma 3
@pytest.mark.parametrize("K,R", [(2, 2.0), (3, 4.0)])
def test_phi_closed_form_matches_monte_carlo(K, R):
    model = symmetric_mixture(K, R)
    x, y, _ = model.sample(200_000, seed=11, dtype=torch.float64)
    omegas = np.vstack([random_directions(3, K, seed=5), specialized_maximizer(0, 1, -1, K, R)])
    for om in omegas:
        terms = y * torch.relu(x @ torch.as_tensor(om))
        mc, se = float(terms.mean()), float(terms.std()) / math.sqrt(terms.numel())
        assert abs(population_correlation(om, K, R) - mc) < 4 * se


@pytest.mark.parametrize("coeffs", [None, {2: 0.3, 3: 1.0}, {3: 1.0, 4: -0.5}])
def test_phi_for_hermite_mixtures_matches_monte_carlo(coeffs):
    """The h2 / h4 perturbations use E[He_k(G)(b+G)_+] = He_{k-2}(-b) phi(b)."""
    K, R = 2, 1.5
    gen = torch.Generator().manual_seed(3)
    n = 400_000
    c = torch.randint(K, (n,), generator=gen)
    z = torch.randn(n, 2 * K, generator=gen, dtype=torch.float64)
    x = z.clone()
    x[torch.arange(n), c] += R
    u = z[torch.arange(n), K + c]
    he = {2: (u**2 - 1) / math.sqrt(2), 3: (u**3 - 3 * u) / math.sqrt(6), 4: (u**4 - 6 * u**2 + 3) / math.sqrt(24)}
    y = sum(a * he[k] for k, a in (coeffs or {3: 1.0}).items())
    for om in random_directions(3, K, seed=9):
        terms = y * torch.relu(x @ torch.as_tensor(om))
        mc, se = float(terms.mean()), float(terms.std()) / math.sqrt(n)
        assert abs(population_correlation(om, K, R, coeffs=coeffs) - mc) < 4 * se


def test_spherical_gradient_matches_autograd_and_is_tangent():
    K, R = 3, 3.0
    om = torch.tensor(random_directions(5, K, seed=1), requires_grad=True)
    # the homogeneous-degree-0 extension omega -> Phi(omega/||omega||) has the spherical gradient as gradient
    phi = population_correlation(om / om.norm(dim=1, keepdim=True), K, R)
    (auto,) = torch.autograd.grad(phi.sum(), om)
    closed = spherical_gradient(om.detach(), K, R)
    assert torch.allclose(auto, closed, atol=1e-12)
    assert torch.allclose((closed * om.detach()).sum(1), torch.zeros(5, dtype=torch.float64), atol=1e-14)
    # numpy in, numpy out
    assert isinstance(spherical_gradient(om.detach().numpy(), K, R), np.ndarray)


# --------------------------------------------------------------------------- Lemmas 4-6
@pytest.mark.parametrize("R", [0.5, 1.0, 4.0, 32.0])
def test_t_star_solves_the_quartic_in_0_R(R):
    t = one_cluster_critical_t(R)
    assert 0 < t < R
    assert abs(t**4 - (R**2 + 4) * t**2 + R**2) < 1e-10 * max(1.0, R**2)
    assert abs(1 / t - t - 3 * t / (R**2 - t**2)) < 1e-9


def test_t_star_tends_to_one_like_R_minus_2():
    Rs = np.array([8.0, 16.0, 32.0, 64.0])
    gap = 1 - one_cluster_critical_t(Rs)
    assert np.all(gap > 0)
    assert np.allclose(gap * Rs**2, 1.5, rtol=0.05)  # t* = 1 - 3/(2 R^2) + O(R^-4)


@pytest.mark.parametrize("K,R,c,tau,zeta", [(2, 4.0, 1, 1, 1), (3, 8.0, 0, -1, 1), (4, 16.0, 3, 1, -1)])
def test_specialized_maximizer_is_a_strict_local_maximum(K, R, c, tau, zeta):
    om = specialized_maximizer(c, tau, zeta, K, R)
    assert abs(np.linalg.norm(om) - 1) < 1e-12
    assert np.abs(spherical_gradient(om, K, R)).max() < 1e-12
    h, basis = spherical_hessian(om, K, R)
    assert basis.shape == (2 * K, 2 * K - 1)
    assert np.linalg.eigvalsh(zeta * h).max() < 0
    assert zeta * population_correlation(om, K, R) == pytest.approx(specialized_value(K, R), rel=1e-12)
    # Lemma 5's expansion: omega* = tau v_c - (tau zeta / R^2) mu_c + O(R^-2)
    approx = np.zeros(2 * K)
    approx[K + c], approx[c] = tau, -tau * zeta / R
    assert np.linalg.norm(om - approx) < 2.0 / R**2


def test_mixed_critical_points_are_strict_saddles():
    """Lemma 6's 3^K - 1 positive critical points: s = 1 maxima, s active clusters give s - 1 unstable directions."""
    K, R = 3, 6.0
    for zeta in (1, -1):
        points = positive_critical_points(K, R, zeta)
        assert len(points) == 3**K - 1
        for p in points:
            assert np.abs(spherical_gradient(p.omega, K, R)).max() < 1e-12
            assert zeta * population_correlation(p.omega, K, R) > 0
            ev = np.linalg.eigvalsh(zeta * spherical_hessian(p.omega, K, R)[0])
            assert int((ev > 1e-12).sum()) == p.s - 1


# ----------------------------------------------------------------------- Lemmas 7-8 flows
def test_teacher_only_flow_conserves_norm_and_increases_signed_correlation():
    K, R = 2, 3.0
    w0 = random_directions(6, K, seed=2)
    flow = teacher_only_flow(w0, K, R, 300.0, t_eval=np.linspace(0, 300, 61))
    assert np.abs(np.linalg.norm(flow.omega, axis=-1) - 1).max() < 1e-6
    signed = flow.zeta * flow.phi  # (T, m)
    assert np.all(np.diff(signed, axis=0) > -1e-10)
    assert np.all(flow.zeta * flow.u[1:] > 0)  # Lemma 7: zeta u(t) > 0 for t > 0
    assert np.all(signed >= np.abs(flow.phi[0]) - 1e-12)


def test_teacher_only_flow_reaches_the_predicted_maximizer():
    K, R = 2, 4.0
    flow = teacher_only_flow(random_directions(4, K, seed=0), K, R, 3000.0, t_eval=[0.0, 3000.0])
    assert flow.gradient_norm().max() < 1e-6
    assert flow.distance_to_maximizer().max() < 1e-5
    _, _, dist = flow.final()
    t = one_cluster_critical_t(R)
    assert np.allclose(dist, math.sqrt(2 - 2 * math.sqrt(1 - t**2 / R**2)), atol=1e-5)


@pytest.mark.parametrize("coeffs", [None, {3: 1.0, 2: 0.4, 4: -0.3}])
def test_teacher_flow_jacobian_is_exact(coeffs):
    """The closed-form Jacobian BDF uses equals central finite differences of the right-hand side."""
    from monosem.theory.correlation import check_hermite_coeffs
    from monosem.theory.flows import _teacher_jacobian_blocks, _teacher_rhs

    K, R, m = 3, 5.0, 4
    c = check_hermite_coeffs(coeffs)
    w = random_directions(m, K, seed=7)
    state = np.concatenate([np.array([-1.3, 0.2, 0.9, 2.5]), w.ravel()])
    rhs = _teacher_rhs(K, R, c, m)
    blocks = _teacher_jacobian_blocks(state, K, R, c, m)
    d, h = 2 * K, 1e-6
    for j in range(m):
        idx = np.concatenate([[j], m + j * d + np.arange(d)])
        for col, i in enumerate(idx):
            e = np.zeros_like(state)
            e[i] = h
            fd = (rhs(0.0, state + e) - rhs(0.0, state - e))[idx] / (2 * h)
            assert np.allclose(blocks[j, :, col], fd, rtol=1e-6, atol=1e-8)
    # saturated amplitudes (tanh u == 1 in floating point) give a finite Jacobian
    state[:m] = [40.0, -800.0, 1e4, 0.0]
    assert np.all(np.isfinite(_teacher_jacobian_blocks(state, K, R, c, m)))


@pytest.mark.slow
def test_teacher_only_flow_survives_the_paper_profile_horizon():
    """Regression: with SciPy's finite-difference Jacobian this paper-profile run (K = 3, R = 32,
    m = 256, t_max = 5e4, the seed of page 07) failed with 'Factor is exactly singular'."""
    flow = teacher_only_flow(random_directions(256, 3, seed=300), 3, 32.0, 5e4, t_eval=[0.0, 5e4])
    assert np.abs(np.linalg.norm(flow.omega, axis=-1) - 1).max() < 1e-6
    assert np.all(flow.zeta * flow.u[-1] > 0)


def test_nearest_direction():
    K = 3
    om = np.zeros((2, 2 * K))
    om[0, K + 1] = -1.0
    om[1, [2, K + 2]] = [0.6, 0.8]
    label, tau, dist = nearest_direction(om, K)
    assert label.tolist() == [1, 2] and tau.tolist() == [-1, 1]
    assert np.allclose(dist, [0.0, math.sqrt(0.36 + 0.04)])


# ------------------------------------------------------------------------------ Lemma 9
@pytest.mark.slow
def test_two_layer_flow_keeps_invariant_and_tracks_teacher():
    K, R, m = 2, 3.0, 4
    w0 = random_directions(m, K, seed=4)
    # T = 60: the teacher amplitudes reach |u| ~ 2.4, still the early (tracking) phase of Lemma 9
    t_eval = np.linspace(0, 60, 16)
    bdf = teacher_only_flow(w0, K, R, 60.0, t_eval=t_eval)
    errs = []
    for eps in (1e-2, 2e-3):
        kw = dict(t_eval=t_eval, n_mc=512, seed=0, device="cpu", step=0.5)
        full = two_layer_population_flow(w0, K, R, eps, 60.0, **kw)
        teacher = two_layer_population_flow(w0, K, R, eps, 60.0, interaction=False, **kw)
        assert full.invariant_error.max() < 1e-6
        # without interaction the network's (u, omega) follow eq. 18: the BDF solution
        assert tracking_error(teacher, bdf).max() < 1e-4
        errs.append(tracking_error(full, teacher).max())
    # Lemma 9: the tracking error scales like m eps^2 (slope 2 on a log-log plot)
    slope = math.log(errs[0] / errs[1]) / math.log(1e-2 / 2e-3)
    assert 1.6 < slope < 2.4


# ------------------------------------------------------------------------------ coverage
@pytest.mark.parametrize("m,K", [(0, 1), (1, 1), (3, 2), (4, 3), (6, 3), (5, 4)])
def test_coverage_probability_matches_enumeration(m, K):
    hits = sum(len(set(labels)) == K for labels in itertools.product(range(K), repeat=m))
    assert coverage_probability(m, K) == pytest.approx(hits / K**m, abs=1e-15)


@pytest.mark.parametrize("m,K", [(5, 5), (20, 5), (50, 10), (300, 50)])
def test_coverage_bounds_are_below_the_exact_value(m, K):
    exact = coverage_probability(m, K)
    b1, b2 = coverage_lower_bounds(m, K)
    assert b2 <= b1 <= exact <= 1


# ------------------------------------------------------------------------------ SymPy
@pytest.mark.slow
@pytest.mark.parametrize("checks", [lemma3_checks, lemma4_checks, lemma5_checks, lemma6_checks])
def test_symbolic_checks(checks):
    results = checks()
    assert results and all(results.values()), [k for k, v in results.items() if not v]


# ------------------------------------------------------------------------------ bad input
def test_bad_arguments_raise():
    good = specialized_maximizer(0, 1, 1, 2, 4.0)
    with pytest.raises(ValueError, match="R="):
        population_correlation(good, 2, 0.0)
    with pytest.raises(ValueError, match="R="):
        one_cluster_critical_t(-1.0)
    with pytest.raises(ValueError, match="K="):
        population_correlation(good, 0, 4.0)
    with pytest.raises(ValueError, match="unit"):
        population_correlation(2 * good, 2, 4.0)
    with pytest.raises(ValueError, match="unit"):
        spherical_gradient(2 * good, 2, 4.0)
    with pytest.raises(ValueError, match="shape"):
        population_correlation(np.ones(3) / math.sqrt(3), 2, 4.0)
    with pytest.raises(ValueError, match="unit"):
        teacher_only_flow(2 * good[None], 2, 4.0, 10.0)
    with pytest.raises(ValueError, match="tau"):
        specialized_maximizer(0, 0, 1, 2, 4.0)
    with pytest.raises(ValueError, match="c="):
        specialized_maximizer(2, 1, 1, 2, 4.0)
    with pytest.raises(ValueError, match="K="):
        coverage_probability(3, 0)
    with pytest.raises(ValueError, match="eps="):
        two_layer_population_flow(good[None], 2, 4.0, 0.0, 10.0)
    with pytest.raises(ValueError, match="coeffs"):
        population_correlation(good, 2, 4.0, coeffs={1: 1.0})


def test_two_cluster_slice_contains_maxima_and_saddle():
    from monosem.theory import critical_b_squared, positive_critical_points, two_cluster_slice

    K, R = 3, 4.0
    t = one_cluster_critical_t(R)
    assert np.allclose(two_cluster_slice(K, R, 0.0, -t), specialized_maximizer(0, 1, 1, K, R))
    saddle = two_cluster_slice(K, R, np.pi / 4, -math.sqrt(2 * critical_b_squared(2, R)))
    pts = [p.omega for p in positive_critical_points(K, R, zeta=1, s=2) if p.active == (0, 1) and p.signs == (1, 1)]
    assert np.allclose(saddle, pts[0])


def test_specialization_index_and_empirical_coverage():
    from monosem.theory import empirical_coverage, specialization_index

    K = 2
    om = np.array([[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5)]])
    assert np.allclose(specialization_index(om, K), [1.0, 0.5])
    labels = np.repeat(np.arange(4), 50)  # a perfectly uniform pool
    assert abs(empirical_coverage(labels, 8, 4, n_draws=4000, seed=0) - coverage_probability(8, 4)) < 0.04
