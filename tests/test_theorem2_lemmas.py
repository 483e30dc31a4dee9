"""Page 08's lemma checks (:mod:`monosem.experiments.questions.theorem2_lemmas`) hold; the two
Monte-Carlo checks that take a minute (Lemma 11's Rademacher estimate, Lemma 15's subspaces) run
in the page's regression test instead."""

from monosem.experiments.questions import theorem2_lemmas as L


def test_the_specialized_mlp_fits_and_its_budget_at_R_1_is_at_most_3K():
    mlp = L.specialized_mlp_table(seed=0)
    assert mlp["max|F - f*| < 1e-12"].all()
    assert mlp.loc[mlp["R"] == 1.0, "B_R <= 3K"].all()  # Lemma 10: B_1 <= 3K (not every B_R)


def test_the_agop_and_hermite_and_harmonic_checks_hold():
    assert L.agop_bayes_table(seed=0)["within 3 se"].all()
    hermite = L.hermite_table(6)
    assert (hermite.loc[2:, "exact - closed"] == "0").all()
    harmonic, agree = L.harmonic_table()
    assert agree and (harmonic["H formula"] == harmonic["dim ker Lap"]).all()


def test_the_hermite_tail_decays_like_the_fitted_power():
    import numpy as np

    r0 = np.unique(np.logspace(0, 3, 40).astype(int))
    exponent, lo, hi = L.tail_exponent(r0)
    assert (lo, hi) == (10, 1000)
    # the fit the page quotes: near the r0^(-3/2) that hermite_tail documents
    assert -1.6 < exponent < -1.4
