"""Theorem 2 (Section 4.2, Appendix B.2): the MLP / kernel / RFM sample-complexity separation.

The pieces, one module per step of the proof:

* :mod:`.separation` -- Lemma 10 (the exact specialized MLP), Lemma 11 (path-norm Rademacher
  bound, MLP risk bound) and Lemma 12 (the ground-truth AGOP and the risk floor of any function
  of sqrt(M) x);
* :mod:`.hermite` -- Lemma 13 (Hermite coefficients of the clipped ramp, Parseval tails);
* :mod:`.harmonic` -- Lemma 14 (harmonic dimension H_{r,K} and directional energy alpha_{r,K});
* :mod:`.kernel_bound` -- Lemmas 15-17 (invariant random subspaces, the all-orders kernel/RFM
  lower bound and its polynomial-budget floor).

The experiment the theorem predicts lives in :mod:`monosem.experiments.theorem2`.
"""

from .harmonic import (
    harmonic_dimension,
    harmonic_dimension_direct,
    harmonic_energy,
    harmonic_energy_direct,
    harmonic_energy_exact,
    harmonic_energy_sum,
)
from .hermite import (
    clipped_ramp,
    clipped_ramp_hermite_coefficients,
    clipped_ramp_hermite_exact,
    clipped_ramp_hermite_quadrature,
    clipped_ramp_moments,
    hermite_tail,
    hermite_tail_direct,
    lemma13_closed_form_exact,
    lemma13_generating_function_check,
    normalized_hermite,
)
from .kernel_bound import (
    DEFAULT_R_MAX,
    invariant_subspace_mc,
    kernel_bound_onset,
    kernel_lower_bound,
    kernel_lower_bound_tail,
    polynomial_budget_floor,
)
from .separation import (
    THEOREM2_CONSTANT,
    ExactSpecializedMLP,
    agop_bayes_lower_bound,
    agop_bayes_risk_mc,
    empirical_agop,
    exact_specialized_mlp,
    frobenius_budget,
    ground_truth_agop,
    mlp_risk_upper_bound,
    rademacher_atoms_mc,
    rademacher_bound,
)

__all__: list[str] = [
    # Lemma 10-12
    "ExactSpecializedMLP",
    "exact_specialized_mlp",
    "frobenius_budget",
    "THEOREM2_CONSTANT",
    "rademacher_bound",
    "rademacher_atoms_mc",
    "mlp_risk_upper_bound",
    "ground_truth_agop",
    "empirical_agop",
    "agop_bayes_lower_bound",
    "agop_bayes_risk_mc",
    # Lemma 13
    "clipped_ramp",
    "normalized_hermite",
    "clipped_ramp_hermite_coefficients",
    "clipped_ramp_hermite_exact",
    "clipped_ramp_hermite_quadrature",
    "lemma13_closed_form_exact",
    "lemma13_generating_function_check",
    "clipped_ramp_moments",
    "hermite_tail",
    "hermite_tail_direct",
    # Lemma 14
    "harmonic_dimension",
    "harmonic_dimension_direct",
    "harmonic_energy",
    "harmonic_energy_exact",
    "harmonic_energy_sum",
    "harmonic_energy_direct",
    # Lemmas 15-17
    "DEFAULT_R_MAX",
    "kernel_lower_bound",
    "kernel_lower_bound_tail",
    "kernel_bound_onset",
    "polynomial_budget_floor",
    "invariant_subspace_mc",
]
