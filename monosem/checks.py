"""Argument checks shared by every module: a clear ValueError that names the parameter and says
what is allowed. At the bottom of the package, beside :mod:`monosem.device`."""

from __future__ import annotations

import math
import numbers

__all__ = ["check_int", "check_nonnegative", "check_positive"]


def check_int(value, name: str, minimum: int = 1, maximum: int | None = None, *, what: str = "") -> int:
    """``value`` as an ``int`` if it is an integer (not a bool; NumPy integers count) in
    [``minimum``, ``maximum``]. ``what`` says what the parameter is, in the error message."""
    ok = not isinstance(value, bool) and isinstance(value, numbers.Integral) and value >= minimum
    if ok and maximum is not None:
        ok = value <= maximum
    if not ok:
        allowed = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise ValueError(f"{name}={value!r} must be an integer {allowed}" + (f" ({what})" if what else ""))
    return int(value)


def check_nonnegative(value, name: str) -> float:
    """``value`` as a ``float`` if it is a finite real number >= 0 (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name}={value!r} must be a finite number >= 0")
    return float(value)


def check_positive(value, name: str) -> float:
    """``value`` as a ``float`` if it is a positive finite real number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}={value!r} must be a positive number")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name}={value!r} must be a positive finite number")
    return float(value)
