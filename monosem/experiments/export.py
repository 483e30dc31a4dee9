"""The numbers behind a figure as a table one can download: one row per cell (CSV or JSON).

``python -m monosem export fig2 --profile cpu --format csv`` writes every cached cell of Figure 2
at the cpu profile; ``--recorded`` takes the cells shipped with the package instead (the long
run). Each row holds the cell's coordinates (method, K, n, run, network size), its metrics (test
MSE, median squared error, and for the MLPs the training MSE and why training stopped), its wall
time and its key, which names the result file and recomputes it (``monosem run``).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from ..checks import check_choice

__all__ = ["COLUMNS", "export_rows", "write_rows"]

#: the columns of an exported table, in order
COLUMNS = ("figure", "profile", "method", "K", "n", "run", "width", "batch", "test_mse", "test_median_se",
           "train_mse", "stop_reason", "stop_step", "best_iteration", "gate_ari_test", "seconds", "key")


def export_rows(figure: str, profile: str, records: dict) -> list[dict[str, Any]]:
    """One row per cell of ``records`` (``{job: record}``), sorted by method, K, n and run."""
    rows = []
    for job, rec in sorted(records.items(), key=lambda kv: (kv[0].method, kv[0].K, kv[0].n, kv[0].run,
                                                             kv[0].param_dict.get("width", 0))):
        m, p = rec["metrics"], job.param_dict
        rows.append({
            "figure": figure, "profile": profile, "method": job.method, "K": job.K, "n": job.n, "run": job.run,
            "width": p.get("width"), "batch": p.get("batch"),
            **{k: m.get(k) for k in ("test_mse", "test_median_se", "train_mse", "stop_reason", "stop_step",
                                     "best_iteration", "gate_ari_test")},
            "seconds": rec.get("timing", {}).get("seconds"), "key": job.key(),
        })
    return rows


def write_rows(rows: list[dict[str, Any]], fmt: str) -> str:
    """``rows`` as CSV (a header line, empty fields for missing values) or as a JSON list."""
    if fmt == "json":
        return json.dumps(rows, indent=1)
    check_choice(fmt, "format", ("csv", "json"))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return buf.getvalue()
