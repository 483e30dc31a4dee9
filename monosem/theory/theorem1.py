"""Theorem 1 (Section 4.1, Appendix B.1): specialization under population gradient flow.

The aggregator re-exported by :mod:`monosem.theory`. Its parts, one job each:

* :mod:`.correlation` -- the closed-form population correlation Phi of Lemma 3, its spherical
  gradient and Hessian;
* :mod:`.landscape` -- Lemma 5's t* and specialized maximizers omega*, Lemma 6's finite set of
  positive critical points;
* :mod:`.flows` -- the teacher-only flow (eq. 17/18, Lemma 7) and the full two-layer population
  gradient flow (Lemma 9);
* :mod:`.coverage` -- the exact cluster-coverage probability and the bounds of Lemma 8;
* :mod:`.symbolic_theorem1` -- SymPy checks of the identities behind Lemmas 3-6.
"""

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
]
