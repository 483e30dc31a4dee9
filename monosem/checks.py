"""Argument checks shared by every module: a clear ValueError that names the parameter and says
what is allowed. At the bottom of the package, beside :mod:`monosem.device`."""

from __future__ import annotations

import math
import numbers

__all__ = ["check_choice", "check_int", "check_interval", "check_nonnegative", "check_positive"]


def check_choice(value, name: str, choices) -> object:
    """``value`` if it is one of ``choices``; else a ValueError listing them."""
    choices = list(choices)
    if not any(value == c and type(value) is type(c) for c in choices):
        raise ValueError(f"{name}={value!r} is not allowed; use one of {choices}")
    return value


def check_interval(value, name: str, low: float, high: float, *, closed: str = "both") -> float:
    """``value`` as a float if it is a real number in the interval from ``low`` to ``high``;
    ``closed`` says which ends belong to it: ``"both"``, ``"left"``, ``"right"`` or ``"neither"``."""
    if closed not in ("both", "left", "right", "neither"):
        raise ValueError(f"closed={closed!r} is not allowed; use one of ['both', 'left', 'right', 'neither']")
    left, right = closed in ("both", "left"), closed in ("both", "right")
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        ok = (value >= low if left else value > low) and (value <= high if right else value < high)
    if not ok:
        interval = f"{'[' if left else '('}{low:g}, {high:g}{']' if right else ')'}"
        raise ValueError(f"{name}={value!r} must lie in {interval}")
    return float(value)


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
