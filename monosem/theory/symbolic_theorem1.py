"""SymPy checks of every identity the proofs of Lemmas 3-6 use (Appendix B.1.1), as named booleans.

Each ``lemmaN_checks()`` returns an ordered ``dict[str, bool]``; the notebook prints them and the
tests assert them, so the signs lost in the recovered text (see the paper's README) are settled by
computation: e.g. ``F''(0) = (lambda/2)(1/rho_c^2 + 1/rho_r^2) > 0`` and
``omega* = tau v_c - (tau zeta / R^2) mu_c + O(R^-2)``.
"""

from __future__ import annotations

import sympy as sp

__all__ = ["lemma3_checks", "lemma4_checks", "lemma5_checks", "lemma6_checks", "all_symbolic_checks"]

x, z, b, t = sp.symbols("x z b t", real=True)
rho = sp.Symbol("rho", real=True)
R = sp.Symbol("R", positive=True)
lam = sp.Symbol("lambda", positive=True)
K = sp.Symbol("K", positive=True, integer=True)
zeta = sp.Symbol("zeta", real=True, nonzero=True)


def _gauss(v):
    """Standard normal density phi(v)."""
    return sp.exp(-v**2 / 2) / sp.sqrt(2 * sp.pi)


def _h3(v):
    return (v**3 - 3 * v) / sp.sqrt(6)


def _is_zero(expr) -> bool:
    return bool(sp.simplify(expr) == 0)


def lemma3_checks() -> dict[str, bool]:
    """Lemma 3: E[h3(U) | V] = rho^3 h3(V), the two derivative identities and the integration by parts."""
    V = sp.Symbol("V", real=True)
    r = sp.Symbol("r", real=True)  # correlation, |r| <= 1
    U = r * V + sp.sqrt(1 - r**2) * z  # U = rho V + sqrt(1 - rho^2) Z, Z independent of V
    cond = sp.integrate(sp.expand(_h3(U)) * _gauss(z), (z, -sp.oo, sp.oo))
    # the joint law: Cov(U, V) = rho and Var(U) = 1 for this representation
    cov = sp.integrate(sp.integrate(U * V * _gauss(z) * _gauss(V), (z, -sp.oo, sp.oo)), (V, -sp.oo, sp.oo))
    var = sp.integrate(sp.integrate(U**2 * _gauss(z) * _gauss(V), (z, -sp.oo, sp.oo)), (V, -sp.oo, sp.oo))
    bp = sp.Symbol("b", real=True)
    lhs_ibp = sp.integrate((x**3 - 3 * x) * (bp + x) * _gauss(x), (x, -bp, sp.oo))
    mid_ibp = sp.integrate((x**2 - 1) * _gauss(x), (x, -bp, sp.oo))
    return {
        "U = rho V + sqrt(1-rho^2) Z has Var(U) = 1 and Cov(U, V) = rho": _is_zero(var - 1) and _is_zero(cov - r),
        "E[h3(U) | V] = rho^3 h3(V)": _is_zero(cond - r**3 * _h3(V)),
        "d/dx[(x^2 - 1) phi] = -(x^3 - 3x) phi": _is_zero(sp.diff((x**2 - 1) * _gauss(x), x) + (x**3 - 3 * x) * _gauss(x)),
        "int_{-b}^oo (x^3 - 3x)(b + x) phi dx = int_{-b}^oo (x^2 - 1) phi dx": _is_zero(lhs_ibp - mid_ibp),
        "int_{-b}^oo (x^2 - 1) phi dx = -b phi(b)": _is_zero(mid_ibp + bp * _gauss(bp)),
        "d/dx(x phi) = (1 - x^2) phi": _is_zero(sp.diff(x * _gauss(x), x) - (1 - x**2) * _gauss(x)),
        "E[h3(G)(b + G)_+] = -b phi(b) / sqrt(6)": _is_zero(lhs_ibp / sp.sqrt(6) + bp * _gauss(bp) / sp.sqrt(6)),
    }


def _two_cluster_F():
    bc, br = sp.symbols("b_c b_r", real=True)
    rc, rr = sp.symbols("rho_c rho_r", real=True, nonzero=True)
    F = -zeta / (K * sp.sqrt(6)) * (bc * _gauss(bc) * rc**3 + br * _gauss(br) * rr**3)
    return F, bc, br, rc, rr


def lemma4_checks() -> dict[str, bool]:
    """Lemma 4: KKT equations (16a/16b), 3F = 2 lambda sum rho^2, and F'(0) = 0, F''(0) > 0 on the feasible curve."""
    F, bc, br, rc, rr = _two_cluster_F()
    constraint = bc**2 / R**2 + br**2 / R**2 + rc**2 + rr**2 - 1
    L = F - lam * constraint  # the Lagrangian, with the sign the text lost
    eq16a = -zeta / (K * sp.sqrt(6)) * (1 - bc**2) * _gauss(bc) * rc**3 - 2 * lam / R**2 * bc
    eq16b = -3 * zeta / (K * sp.sqrt(6)) * bc * _gauss(bc) * rc**2 - 2 * lam * rc
    euler = 3 * F - (rc * sp.diff(F, rc) + rr * sp.diff(F, rr))  # rho . grad_rho F = 3F (cubic in rho)
    # on KKT points sum_c rho_c dF/drho_c = 2 lambda sum rho_c^2
    kkt_sub = {sp.diff(F, rc): 2 * lam * rc, sp.diff(F, rr): 2 * lam * rr}
    out = {
        "dL/db_c = 0 is (16a)": _is_zero(sp.diff(L, bc) - eq16a),
        "dL/drho_c = 0 is (16b)": _is_zero(sp.diff(L, rc) - eq16b),
        "d/db (b phi(b)) = (1 - b^2) phi(b)": _is_zero(sp.diff(b * _gauss(b), b) - (1 - b**2) * _gauss(b)),
        "sum_c rho_c dF/drho_c = 3F, hence 3F = 2 lambda sum rho^2 at KKT points": _is_zero(euler)
        and _is_zero((rc * sp.diff(F, rc) + rr * sp.diff(F, rr)).subs(kkt_sub) - 2 * lam * (rc**2 + rr**2)),
    }
    # feasible curve for every sign pattern of (rho_c, rho_r)
    fp_ok = fpp_ok = curve_ok = True
    kkt_all = True
    for sc in (1, -1):
        for sr in (1, -1):
            pc, pr = sp.symbols("p_c p_r", positive=True)  # |rho_c|, |rho_r|
            F_t = F.subs({rc: sc * sp.sqrt(pc**2 + t), rr: sr * sp.sqrt(pr**2 - t)})
            curve_ok &= _is_zero((sc * sp.sqrt(pc**2 + t)) ** 2 + (sr * sp.sqrt(pr**2 - t)) ** 2 - pc**2 - pr**2)
            f1 = sp.diff(F_t, t).subs(t, 0)
            f2 = sp.diff(F_t, t, 2).subs(t, 0)
            rcv, rrv = sc * pc, sr * pr
            pref = -zeta / (K * sp.sqrt(6))
            fp_ok &= _is_zero(f1 - pref * sp.Rational(3, 2) * (bc * _gauss(bc) * rcv - br * _gauss(br) * rrv))
            fpp_ok &= _is_zero(f2 - pref * sp.Rational(3, 4) * (bc * _gauss(bc) / rcv + br * _gauss(br) / rrv))
            # KKT (16b) divided by rho: b phi(b) = -2 lambda K sqrt(6) / (3 zeta rho) for both clusters;
            # b_c, b_r do not move along the curve, so substitute them through phi's argument-free values
            Bc, Br = sp.symbols("B_c B_r", real=True)
            f1_g = sp.expand(pref * sp.Rational(3, 2) * (Bc * rcv - Br * rrv))
            f2_g = sp.expand(pref * sp.Rational(3, 4) * (Bc / rcv + Br / rrv))
            kkt = {Bc: -2 * lam * K * sp.sqrt(6) / (3 * zeta * rcv), Br: -2 * lam * K * sp.sqrt(6) / (3 * zeta * rrv)}
            kkt_all &= _is_zero(f1_g.subs(kkt)) and _is_zero(f2_g.subs(kkt) - lam / 2 * (1 / rcv**2 + 1 / rrv**2))
    rc_, rr_ = sp.symbols("rho_c rho_r", real=True, nonzero=True)
    out["the curve rho_c(t), rho_r(t) keeps rho_c^2 + rho_r^2 (feasible)"] = curve_ok
    out["F'(0) = -(3 zeta/(2K sqrt6)) (b_c phi_c rho_c - b_r phi_r rho_r)"] = fp_ok
    out["F''(0) = -(3 zeta/(4K sqrt6)) (b_c phi_c / rho_c + b_r phi_r / rho_r)"] = fpp_ok
    out["at KKT points F'(0) = 0 and F''(0) = (lambda/2)(1/rho_c^2 + 1/rho_r^2)"] = kkt_all
    out["(lambda/2)(1/rho_c^2 + 1/rho_r^2) > 0 for lambda > 0"] = bool((lam / 2 * (1 / rc_**2 + 1 / rr_**2)).is_positive)
    return out


def _t_star_sq():
    return (R**2 + 4 - sp.sqrt(R**4 + 4 * R**2 + 16)) / 2


def lemma5_checks() -> dict[str, bool]:
    """Lemma 5: the log-derivative, the quartic, one root in (0, R), t* = 1 + O(R^-2), b* and omega* expansions."""
    tp = sp.Symbol("t", positive=True)
    g = tp * _gauss(tp) * (1 - tp**2 / R**2) ** sp.Rational(3, 2)
    logder = 1 / tp - tp - 3 * tp / (R**2 - tp**2)
    quartic = tp**4 - (R**2 + 4) * tp**2 + R**2
    plus = (R**2 + 4 + sp.sqrt(R**4 + 4 * R**2 + 16)) / 2
    minus = _t_star_sq()
    e = sp.Symbol("e", positive=True)  # e = 1/R
    t_star = sp.sqrt(minus)
    t_series = sp.series(t_star.subs(R, 1 / e), e, 0, 4).removeO()
    # omega* in the orthonormal basis (v_c, mu_c / R) for tau = zeta = 1 (the other signs are symmetric)
    tau_, zeta_ = 1, 1
    b_star = -tau_ * zeta_ * t_star
    coef_v = tau_ * sp.sqrt(1 - b_star**2 / R**2)
    coef_mu = b_star / R  # (b*/R^2) mu_c = (b*/R) (mu_c/R)
    pred_v, pred_mu = tau_, -tau_ * zeta_ / R  # tau v_c - (tau zeta / R^2) mu_c
    diff_v = sp.limit(((coef_v - pred_v) * R**2), R, sp.oo)
    diff_mu = sp.limit(((coef_mu - pred_mu) * R**2), R, sp.oo)
    counts = [sp.Poly(quartic.subs(R, r0), tp).count_roots(0, r0) for r0 in (1, 2, 4, 8, 16, 32)]
    return {
        "d/dt log[t phi(t) (1 - t^2/R^2)^(3/2)] = 1/t - t - 3t/(R^2 - t^2)": _is_zero(sp.diff(sp.log(g), tp) - logder),
        "t (R^2 - t^2) (1/t - t - 3t/(R^2-t^2)) = t^4 - (R^2+4) t^2 + R^2": _is_zero(sp.expand(logder * tp * (R**2 - tp**2)) - quartic),
        "t^2 = (R^2 + 4 +- sqrt(R^4 + 4R^2 + 16))/2 solve the quartic": _is_zero(quartic.subs(tp, sp.sqrt(plus)))
        and _is_zero(quartic.subs(tp, sp.sqrt(minus))),
        "the + root exceeds R^2: (R^4+4R^2+16) - (R^2-4)^2 = 12 R^2 > 0": _is_zero((R**4 + 4 * R**2 + 16) - (R**2 - 4) ** 2 - 12 * R**2),
        "the - root lies in (0, R^2): (R^2+4)^2 - (R^4+4R^2+16) = 4R^2 > 0": _is_zero((R**2 + 4) ** 2 - (R**4 + 4 * R**2 + 16) - 4 * R**2),
        "exactly one root in (0, R) (Sturm count at R = 1, 2, 4, 8, 16, 32)": all(c == 1 for c in counts),
        "t* = 1 + O(R^-2) (series in 1/R has no 1/R term)": _is_zero(t_series.coeff(e, 0) - 1) and _is_zero(t_series.coeff(e, 1)),
        "b* = -tau zeta + O(R^-2)": _is_zero(sp.limit((b_star + tau_ * zeta_) * R**2, R, sp.oo) - sp.limit((1 - t_star) * R**2, R, sp.oo)),
        "omega* = tau v_c - (tau zeta/R^2) mu_c + O(R^-2)": bool(diff_v.is_finite) and bool(diff_mu.is_finite),
    }


def lemma6_checks() -> dict[str, bool]:
    """Lemma 6: (1 - b^2) rho^2 = 3 b^2 / R^2, monotonicity of t^2 phi / sqrt(1 - t^2), and the s-cluster equation."""
    rr = sp.Symbol("rho", real=True, nonzero=True)
    c16a = -zeta / (K * sp.sqrt(6)) * (1 - b**2) * _gauss(b) * rr**3 - 2 * lam / R**2 * b
    lam_b = sp.solve(sp.Eq(-3 * zeta / (K * sp.sqrt(6)) * b * _gauss(b) * rr**2, 2 * lam * rr), lam)[0]
    elim = sp.simplify(c16a.subs(lam, lam_b) * K * sp.sqrt(6) / (-zeta * _gauss(b) * rr))
    tq = sp.Symbol("t", positive=True)
    dlog = sp.diff(sp.log(tq**2 * _gauss(tq) / sp.sqrt(1 - tq**2)), tq)
    target = 2 / tq + tq**3 / (1 - tq**2)
    s = sp.Symbol("s", positive=True, integer=True)
    beta = sp.Symbol("beta", positive=True)
    rho2 = 3 * beta / (R**2 * (1 - beta))
    sphere = s * (beta / R**2 + rho2)
    ratio = beta * (4 - beta) / (1 - beta)
    return {
        "eliminating lambda from (16a, 16b): (1 - b^2) rho^2 = 3 b^2 / R^2": _is_zero(elim - ((1 - b**2) * rr**2 - 3 * b**2 / R**2)),
        # both sides are positive, so compare squares: (|b| phi |rho|)^2 / (b^2 phi / sqrt(1-b^2))^2 = 3/R^2
        "|b| phi(b) |rho| is proportional to b^2 phi(b) / sqrt(1 - b^2)": _is_zero(
            (tq * _gauss(tq)) ** 2 * (3 * tq**2 / (R**2 * (1 - tq**2))) / (tq**2 * _gauss(tq)) ** 2 * (1 - tq**2) - 3 / R**2
        ),
        "d/dt log(t^2 phi(t) / sqrt(1 - t^2)) = 2/t + t^3/(1 - t^2)": _is_zero(dlog - target),
        "2/t + t^3/(1 - t^2) > 0 on (0, 1)": sp.solveset(target > 0, tq, sp.Interval.open(0, 1)) == sp.Interval.open(0, 1),
        "sphere constraint with s active clusters: s b^2 (4 - b^2) / (R^2 (1 - b^2)) = 1": _is_zero(sphere - s * ratio / R**2),
        "beta (4 - beta)/(1 - beta) has derivative ((beta-1)^2 + 3)/(1-beta)^2 > 0": _is_zero(sp.diff(ratio, beta) - ((beta - 1) ** 2 + 3) / (1 - beta) ** 2),
        "it rises from 0 (beta -> 0) to oo (beta -> 1), so the root in (0, 1) is unique": sp.limit(ratio, beta, 0) == 0
        and sp.limit(ratio, beta, 1, dir="-") == sp.oo,
    }


def all_symbolic_checks() -> dict[str, dict[str, bool]]:
    """All four lemmas' checks: {'Lemma 3': {...}, ..., 'Lemma 6': {...}}."""
    return {"Lemma 3": lemma3_checks(), "Lemma 4": lemma4_checks(), "Lemma 5": lemma5_checks(), "Lemma 6": lemma6_checks()}
