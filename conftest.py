"""Notebook regression tests: ``pytest --nbval notebooks/`` from the repository root.

The committed ``notebooks/*.ipynb`` hold their outputs at the ``smoke`` profile; nbval runs every
cell again and compares. This file makes the bare command do what ``make test`` does, and makes
the comparison machine-independent without making it blind.

Settings (applied only when ``--nbval`` is given, before any kernel starts: nbval's kernels
inherit this process's environment):

- ``MONOSEM_PROFILE=smoke``, always: the references were executed at smoke, so no other profile
  can be compared with them (a ``MONOSEM_PROFILE`` left in the shell by a book build would
  otherwise run the ``cpu`` profile for an hour and fail);
- ``TQDM_DISABLE=1``: no progress bars in the outputs;
- ``--nbval-current-env`` (the kernel of this interpreter, not the one named in the notebook) and
  ``--nbval-sanitize-with tests/nbval_sanitize.cfg`` (memory addresses, rates, elapsed times),
  unless given on the command line.

Why a tolerant comparison. A trained network's numbers depend on the last bits of every matrix
product, and those depend on the machine: MKL and ATen choose kernels by instruction set and CPU
vendor, Apple silicon and GPUs have their own. A training trajectory turns different last bits
into different printed digits (0.186 on the machine that wrote the references, 0.185 on another),
so an exact comparison tests the machine, not the code. Pinning the instruction set
(``ATEN_CPU_CAPABILITY``, ``MKL_CBWR``) helps on x86 only and cannot pin Apple silicon or a GPU.

How it compares. nbval's own comparison runs first; only when it reports a difference are the
outputs compared again, output by output and MIME type by MIME type, as follows:

- the text with every number taken out must be the same, up to the width of runs of spaces (a
  column widened by one digit): words, symbols, table shapes, row and column counts, the number
  of numbers. ``nan`` is a word.
- integers (no decimal point, no exponent: counts, sizes, seeds, K, n) must be equal;
- decimals and exponent forms (trained or sampled quantities) may differ by a relative tolerance
  (``REL``, 2 %) plus the rounding of the printed digits: ``a`` and ``b`` agree when
  ``|a - b| <= REL * max(|a|, |b|) + (u_a + u_b) / 2``, ``u`` one unit in the last printed
  digit. The rounding term is what a value sitting at a rounding boundary needs (a drift of
  0.01 % turns 0.1855 into 0.185 or 0.186); the relative term is what a training trajectory
  needs.

So a real change still fails: a changed word, a row more or less, a count, a seed, or a
quantity moved by more than 2 % (raising the mixed-link label noise from 0.02 to 0.021 moves
page 02's Bayes risk by 10 %). Cell tags in the notebook's source adjust one cell:

- ``nbval-exact``: compare exactly (symbolic results, whose every character is the result);
- ``nbval-rel-P``: every number of the cell is a quantity within P percent (``nbval-rel-10``),
  integers included (with a unit of 1), for a cell whose numbers a training run decides more
  sensitively than a 2 % drift: a near-random gate, a count of active neurons. A whole
  percentage (an integer followed by ``%``) is then within P percentage points, since it is a
  share of a whole (one neuron of 64 is 1.6 points whether the share is 2 % or 50 %).

Images (``image/png``, ``image/jpeg``) are not compared: nbval leaves them out unless
``--nbdime`` is given, since pixels change with matplotlib, FreeType and the fonts installed. A
figure is still checked by its text form (``<Figure size 880x330 with 2 Axes>``), exactly. HTML
and other text outputs are compared as text, as above.

CI runs the notebooks twice: natively, and with ``ATEN_CPU_CAPABILITY=default
MKL_CBWR=COMPATIBLE``, which changes the bits of matrix products on an AVX2/AVX-512 machine, so a
reference bound to one machine fails there first. On a 2-core AMD EPYC (AVX-512) that second path
moves a few printed numbers: page 04's 0.132 to 0.131, page 09's overlap table by up to 7 % (an
MLP-gated RFM whose gate is near random at the smoke sizes: ARI 0.02), and one neuron of 64 there;
every other output is unchanged. Page 09's two overlap cells carry ``nbval-rel-10``; cells that
print counts decided by training (active and specialized neurons, experts used) carry
``nbval-rel-5`` by their origin, whether or not this machine's second path moves them.
"""

from __future__ import annotations

import math
import os
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"

#: relative tolerance of decimal numbers in a notebook's outputs (see the module docstring)
REL = 0.02

# A number: not glued to a preceding letter, digit, underscore or point (``he2``, ``A071``,
# ``w512`` and version strings are words), optionally signed, optionally with decimals and an
# exponent; a unit or suffix may follow (``0.85x``, ``12ms``), another digit or ``.digit`` may not.
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d+|\.\d+|\d+)(?:[eE][-+]?\d+)?(?!\d|\.\d)")
_SPACES = re.compile(r"[ \t]+")
_TAG_REL = re.compile(r"^nbval-rel-(\d+(?:\.\d+)?)$")


def _is_int(token: str) -> bool:
    return not any(c in token for c in ".eE")


def _unit(token: str) -> float:
    """One unit in the last printed digit of ``token`` (1 for an integer)."""
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def split_numbers(text: str) -> tuple[str, list[tuple[str, bool]]]:
    """``text`` with its numbers replaced by ``#`` and runs of spaces by one, and its numbers,
    each with whether it is a percentage (followed by ``%``)."""
    numbers = [(m.group(), text[m.end():].lstrip(" ").startswith("%")) for m in _NUMBER.finditer(text)]
    return _SPACES.sub(" ", _NUMBER.sub("#", text)), numbers


def numbers_agree(ref: str, test: str, rel: float = REL, *, every: bool = False, percent: bool = False) -> bool:
    """Whether two printed numbers agree. Integers exactly, unless ``every``; decimals (and, with
    ``every``, integers too) when ``|a - b| <= rel * scale + (u_a + u_b) / 2``, ``scale`` the larger
    magnitude (at least 100 for a percentage when ``every``), ``u`` a unit of the last digit."""
    if ref == test:
        return True
    a, b = float(ref), float(test)
    if not every and _is_int(ref) and _is_int(test):
        return False
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    scale = max(abs(a), abs(b), 100.0 if every and percent else 0.0)
    return abs(a - b) <= rel * scale + (_unit(ref) + _unit(test)) / 2


def text_differences(ref: str, test: str, rel: float = REL, *, every: bool = False) -> list[str]:
    """Why ``test`` does not reproduce ``ref`` (empty when it does): a different text around the
    numbers, or the numbers that are farther apart than the tolerance."""
    ref_text, ref_numbers = split_numbers(ref)
    test_text, test_numbers = split_numbers(test)
    if ref_text != test_text or len(ref_numbers) != len(test_numbers):
        return ["the text around the numbers differs"]
    return [f"{r} != {t}" for (r, pr), (t, pt) in zip(ref_numbers, test_numbers)
            if not numbers_agree(r, t, rel, every=every, percent=pr and pt)]


def cell_tolerance(tags) -> tuple[float, bool] | None:
    """``(rel, every)`` for a cell with these tags (``every``: integers are quantities too);
    None for an exact comparison."""
    if "nbval-exact" in tags:
        return None
    for tag in tags:
        m = _TAG_REL.match(tag)
        if m:
            return float(m.group(1)) / 100, True
    return REL, False


def _flatten(item, outputs, skip) -> dict[str, list]:
    """nbval's view of a cell's outputs: one list of values per MIME type or stream name."""
    from nbval.plugin import transform_streams_for_comparison

    flat = defaultdict(list)
    for output in transform_streams_for_comparison(outputs):
        for key, value in output.items():
            if key in skip:
                continue
            if key == "data":
                for mime, data in value.items():
                    if mime not in skip:
                        flat[mime].append(item.sanitize(data))
            else:
                flat[key].append(item.sanitize(value))
    return flat


def _tolerant_compare(original):
    def compare_outputs(self, test, ref, skip_compare=None):
        if original(self, test, ref, skip_compare):
            return True
        tolerance = cell_tolerance(self.cell.metadata.get("tags", []))
        if tolerance is None:
            return False
        skip = skip_compare or self.parent.skip_compare
        ref_flat, test_flat = _flatten(self, ref, skip), _flatten(self, test, skip)
        if set(ref_flat) != set(test_flat):
            return False
        problems = []
        for key, ref_values in ref_flat.items():
            test_values = test_flat[key]
            if len(ref_values) != len(test_values):
                return False
            for r, t in zip(ref_values, test_values):
                if not (isinstance(r, str) and isinstance(t, str)):
                    if r != t:
                        return False
                    continue
                problems += [f"{key}: {p}" for p in text_differences(r, t, tolerance[0], every=tolerance[1])]
        if problems:
            rel, every = tolerance
            self.comparison_traceback.append(
                f"\n Beyond the tolerance ({'every number' if every else 'decimals'} within {rel:.0%} plus the "
                f"printed rounding{'' if every else ', integers exact'}):\n  " + "\n  ".join(problems))
            return False
        self.comparison_traceback = []
        return True

    compare_outputs.__doc__ = "nbval's comparison, then the tolerant one of the root conftest.py."
    return compare_outputs


def pytest_configure(config):
    option = config.option
    if not (getattr(option, "nbval", False) or getattr(option, "nbval_lax", False)):
        return
    os.environ["MONOSEM_PROFILE"] = "smoke"
    os.environ["TQDM_DISABLE"] = "1"
    # (nbval refuses an option given twice, under its name and its deprecated alias)
    if not (option.nbval_kernel_name or option.nbval_current_env or option.current_env):
        option.nbval_current_env = True
    if option.nbval_sanitize_with is None and option.sanitize_with is None:
        option.nbval_sanitize_with = str(SANITIZE)

    from nbval import plugin

    if not getattr(plugin.IPyNbCell.compare_outputs, "_monosem_tolerant", False):
        plugin.IPyNbCell.compare_outputs = _tolerant_compare(plugin.IPyNbCell.compare_outputs)
        plugin.IPyNbCell.compare_outputs._monosem_tolerant = True
