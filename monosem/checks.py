"""Argument checks shared by every module: a clear ValueError that names the parameter and says
what is allowed. At the bottom of the package, beside :mod:`monosem.device`."""

from __future__ import annotations

import math
import numbers

__all__ = ["check_int", "check_positive"]


def check_int(value, name: str, minimum: int = 1) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool) >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name}={value!r} must be an integer >= {minimum}")
    return int(value)


def check_positive(value, name: str) -> float:
    """``value`` as a ``float`` if it is a positive finite real number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}={value!r} must be a positive number")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name}={value!r} must be a positive finite number")
    return float(value)
