"""monosem: the executable companion to *Revenge of Monosemanticity: Specialized Neurons Improve
Data Efficiency in MLPs* (Abedsoltan, Boix-Adsera, Kalogiannis, Belkin, 2026).

Sub-modules, bottom to top: :mod:`monosem.device`, :mod:`monosem.checks`, :mod:`monosem.profiles`, :mod:`monosem.plots`;
:mod:`monosem.data`; later sections add kernels, training, specialization metrics, gating and
theory.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("monosem")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+local"

__all__ = ["__version__"]
