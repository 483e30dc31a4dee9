"""Kernel methods of the paper (Appendix A.2, A.3): the metric Laplace kernel, kernel ridge
regression with exact / conjugate-gradient / EigenPro solvers, the Recursive Feature Machine with
its closed-form AGOP, bandwidth rules, and per-cluster oracles.

Layering: this sub-package uses :mod:`monosem.device` and :mod:`monosem.checks` only (and NumPy, SciPy, scikit-learn,
torch); it never imports training, models, gating, theory or experiments.
"""

from .agop import agop
from .eigenpro import EigenProConfig
from .metric_summary import effective_rank, normalized_spectrum, subspace_capture, trace_share
from .oracle import PerClusterOracle
from .regressor import LaplaceKernelRegressor
from .rfm import RFMRegressor

__all__ = [
    "LaplaceKernelRegressor",
    "RFMRegressor",
    "PerClusterOracle",
    "EigenProConfig",
    "agop",
    "normalized_spectrum",
    "effective_rank",
    "trace_share",
    "subspace_capture",
]
