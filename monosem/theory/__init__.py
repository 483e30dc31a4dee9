"""Theory of Section 4: closed forms, landscapes, population gradient flows and bounds.

Every name below is importable from ``monosem.theory``; each lives in the module of its step of
the proof. The lemma map:

Theorem 1 (Section 4.1, Appendix B.1): neurons specialize under population gradient flow

* Lemma 3 (closed-form population correlation Phi, its spherical gradient and Hessian):
  :mod:`.correlation`;
* Lemmas 4-6 (one-cluster critical points t*, the specialized maximizers omega*, the finite set
  of positive critical points): :mod:`.landscape`;
* Lemma 7 (teacher-only flow, eq. 17/18) and Lemma 9 (the full two-layer population gradient
  flow from a small initialization): :mod:`.flows`;
* Lemma 8 (cluster coverage: the exact probability and its bounds): :mod:`.coverage`;
* SymPy checks of the identities behind Lemmas 3-6: :mod:`.symbolic_theorem1`.

Theorem 2 (Section 4.2, Appendix B.2): the MLP / kernel / RFM sample-complexity separation

* Lemma 10 (the exact specialized MLP), Lemma 11 (path-norm Rademacher bound, MLP risk bound),
  Lemma 12 (the ground-truth AGOP and the risk floor of any function of sqrt(M) x):
  :mod:`.separation`;
* Lemma 13 (Hermite coefficients of the clipped ramp, Parseval tails): :mod:`.hermite`;
* Lemma 14 (harmonic dimension H_{r,K} and directional energy alpha_{r,K}): :mod:`.harmonic`;
* Lemmas 15-17 (invariant random subspaces, the all-orders kernel/RFM lower bound and its
  polynomial-budget floor): :mod:`.kernel_bound`.

The experiments the theorems predict live in :mod:`monosem.experiments` (pages 07 and 08).
"""

# Theorem 1
from .correlation import (
    cluster_coordinates,
    euclidean_gradient,
    population_correlation,
    spherical_gradient,
    spherical_hessian,
)
from .coverage import coverage_lower_bounds, coverage_probability, empirical_coverage
from .flows import (
    TeacherOnlyFlow,
    TwoLayerFlow,
    nearest_direction,
    specialization_index,
    random_directions,
    teacher_only_flow,
    tracking_error,
    two_layer_population_flow,
)
from .landscape import (
    CriticalPoint,
    critical_b_squared,
    one_cluster_critical_t,
    positive_critical_points,
    specialized_maximizer,
    specialized_value,
    two_cluster_slice,
)
from .symbolic_theorem1 import all_symbolic_checks, lemma3_checks, lemma4_checks, lemma5_checks, lemma6_checks

# Theorem 2
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

__all__ = [
    "population_correlation",
    "euclidean_gradient",
    "spherical_gradient",
    "spherical_hessian",
    "cluster_coordinates",
    "one_cluster_critical_t",
    "critical_b_squared",
    "specialized_maximizer",
    "specialized_value",
    "CriticalPoint",
    "positive_critical_points",
    "two_cluster_slice",
    "specialization_index",
    "random_directions",
    "nearest_direction",
    "TeacherOnlyFlow",
    "teacher_only_flow",
    "TwoLayerFlow",
    "two_layer_population_flow",
    "tracking_error",
    "coverage_probability",
    "coverage_lower_bounds",
    "empirical_coverage",
    "lemma3_checks",
    "lemma4_checks",
    "lemma5_checks",
    "lemma6_checks",
    "all_symbolic_checks",
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
    "harmonic_dimension",
    "harmonic_dimension_direct",
    "harmonic_energy",
    "harmonic_energy_exact",
    "harmonic_energy_sum",
    "harmonic_energy_direct",
    "DEFAULT_R_MAX",
    "kernel_lower_bound",
    "kernel_lower_bound_tail",
    "kernel_bound_onset",
    "polynomial_budget_floor",
    "invariant_subspace_mc",
]
