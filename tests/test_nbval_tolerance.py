"""The notebook regression tests' output comparison (the repository root's conftest.py)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("monosem_nbval_conftest", ROOT / "conftest.py")
nbc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nbc)


def test_numbers_are_taken_out_of_the_text_and_words_stay():
    text, numbers = nbc.split_numbers("he2 A071 w512 torch 2.13.0:  0.85x,   -4.0e-04 and 58 % of 64/64 at K=10.")
    assert text == "he2 A071 w512 torch 2.13.0: #x, # and # % of #/# at K=#."
    assert numbers == [("0.85", False), ("-4.0e-04", False), ("58", True), ("64", False), ("64", False), ("10", False)]
    assert nbc.split_numbers("nan 1e-12 <Figure size 880x330 with 2 Axes>")[1] == [("1e-12", False), ("880", False), ("2", False)]


@pytest.mark.parametrize("ref, test", [
    ("0.186", "0.185"),        # the last digit of a trained quantity
    ("0.1855", "0.1861"),      # within 2 %
    ("4.047e-04", "4.06e-04"),
    ("0.87", "0.86"),          # a rounding boundary at two digits
    ("-0.0", "0.0"),
])
def test_trained_decimals_agree_within_the_tolerance(ref, test):
    assert nbc.numbers_agree(ref, test)


@pytest.mark.parametrize("ref, test", [
    ("4.047e-04", "4.46e-04"),  # the Bayes risk with the label noise at 0.021 instead of 0.02
    ("0.186", "0.192"),
    ("64", "63"),               # integers: counts, sizes, seeds
    ("0", "1"),
    ("1.0", "nan"),
])
def test_real_changes_do_not(ref, test):
    assert not nbc.numbers_agree(ref, test)


def test_a_tagged_cell_treats_every_number_as_a_quantity():
    rel, every = nbc.cell_tolerance(["nbval-rel-10"])
    assert rel == pytest.approx(0.10) and every
    assert nbc.numbers_agree("64", "63", rel, every=True) and nbc.numbers_agree("1.30", "1.21", rel, every=True)
    assert nbc.numbers_agree("2", "0", rel, every=True, percent=True)  # 2 % / 0 %: one neuron of 64
    assert not nbc.numbers_agree("2", "0", rel, every=True) and not nbc.numbers_agree("1.30", "1.10", rel, every=True)
    assert nbc.cell_tolerance(["nbval-exact"]) is None and nbc.cell_tolerance([]) == (nbc.REL, False)


def test_text_differences_see_words_rows_and_numbers_but_not_column_widths():
    ref = "gamma  ReLU  gated\n  0.5  0.78   0.87\n"
    assert nbc.text_differences(ref, "gamma  ReLU  gated\n  0.5  0.779  0.869\n") == []
    assert nbc.text_differences(ref, "gamma  ReLU  gated\n  0.5  0.78   0.95\n") == ["0.87 != 0.95"]
    assert nbc.text_differences(ref, "gamma  ReLU  gates\n  0.5  0.78   0.87\n")
    assert nbc.text_differences(ref, ref + "    4  0.43   0.51\n")


def test_every_nbval_tag_of_the_notebooks_is_known():
    known = {"nbval-ignore-output", "nbval-skip", "nbval-check-output", "nbval-raises-exception", "nbval-exact"}
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for tag in cell.metadata.get("tags", []):
                if tag.startswith("nbval"):
                    assert tag in known or re.fullmatch(r"nbval-rel-\d+(\.\d+)?", tag), f"{path.name}: unknown tag {tag!r}"
