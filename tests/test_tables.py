"""The book's number format (monosem.tables): integers grouped, floats to their digits, a dash
for what is missing, no bare index, long tables folded, every table's numbers as CSV."""

from __future__ import annotations

import base64
import re

import numpy as np
import pandas as pd
import pytest

from monosem import tables
from monosem.tables import MISSING, THIN, count, number, percent, plural, span, thousands


@pytest.mark.parametrize("value, text", [
    (10000, f"10{THIN}000"), (np.int64(6000), f"6{THIN}000"), (24000.0, f"24{THIN}000"), (0.0123456, "0.0123"),
    (35.94, "35.9"), (2811.4, f"2{THIN}811"), (0.001, "0.001"), (0.00012345, "1.23×10⁻⁴"), (0, "0"), (-0.5, "-0.5"),
    (float("nan"), MISSING), (None, MISSING), (pd.NA, MISSING), (float("inf"), MISSING), ("text", "text"),
])
def test_one_number_format(value, text):
    assert number(value) == text


def test_a_range_in_prose_is_one_value_where_its_ends_print_alike():
    assert thousands(200_000) == f"200{THIN}000"
    assert span([2.38, 2.17, 2.48], ".2f") == "2.17\u20132.48"
    assert span(pd.Series([1.04, 1.041]), ".2f") == "1.04"
    assert span([20_000, np.nan, 200_000]) == f"20{THIN}000\u2013200{THIN}000"
    assert span([0.5, 12], lambda v: f"{v:.2g}", "\u00d7") == "0.5\u201312\u00d7"
    assert span([]) == MISSING and span([], empty="none") == "none"
    assert count(1, "run") == "1 run" and count(5.0, "run") == "5 runs" and count(0, "seed") == "0 seeds"
    assert count(10_000, "cell") == f"10{THIN}000 cells" and plural("run", 1) == "run" and plural("run", 2) == "runs"
    assert percent(0.434) == "43 %" and percent(0.0465, 1, sign=True) == "+4.7 %" and span([78, 79], ".0f", " %") == "78\u201379 %"


def test_a_column_of_counts_with_a_gap_stays_integer_and_nothing_prints_nan():
    df = pd.DataFrame({"n": [1e4, 2e4, np.nan], "test MSE": [0.01234, np.nan, 1.5],
                       "runs": pd.array([5, None, 1], dtype="Int64")})
    shown = tables.format_frame(df)
    assert list(shown["n"]) == [f"10{THIN}000", f"20{THIN}000", MISSING]
    assert list(shown["test MSE"]) == ["0.0123", MISSING, "1.5"]
    assert list(shown["runs"]) == ["5", MISSING, "1"]
    page = tables.html(df)
    assert not re.search(r"e\+0|NaN|&lt;NA&gt;|<NA>", page.split('href="data:')[0])
    assert "<th>0</th>" not in page, "a bare 0, 1, 2 index is shown"


def test_a_long_table_is_folded_and_its_csv_holds_every_number():
    df = pd.DataFrame({"K": range(30), "seconds": np.linspace(0.5, 30.5, 30)}).set_index("K")
    page = tables.html(df)
    assert page.startswith("<details") and "30 rows" in page
    data = re.search(r'href="data:text/csv;charset=utf-8;base64,([^"]+)"', page).group(1)
    csv = base64.b64decode(data).decode()
    assert csv.splitlines()[0] == "K,seconds" and len(csv.splitlines()) == 31
    assert not tables.html(df.head(5)).startswith("<details")
