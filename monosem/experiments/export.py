"""The numbers behind a figure as a table one can download: one row per cell (CSV or JSON).

``python -m monosem export fig2 --profile cpu --format csv`` writes every cached cell of Figure 2
at the cpu profile; ``--recorded`` takes the cells shipped with the package instead (the long
run). Each row holds the cell's coordinates (method, K, n, run, network size), its metrics (test
MSE, median squared error, and for the MLPs the training MSE and why training stopped), its wall
time and its key, which names the result file and recomputes it (``monosem run``).

A question whose cells are not the mixed-link grid writes its own rows (:func:`~.registry.register_rows`):
``fig1`` one row per (branch, seed) of Figure 1's table beside the paper's columns, ``theorem2``
one per (K, n, estimator) of Section 4.2's experiment, ``theorem1`` one per section of page 07's
record, ``drift`` one per angle.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from ..checks import check_choice
from .specs import network_of, width_of
from .registry import ROWS

__all__ = ["COLUMNS", "export_rows", "columns_of", "write_rows"]

#: the columns of an exported table, in order
COLUMNS = ("figure", "profile", "method", "K", "n", "run", "gamma", "width", "batch", "test_mse", "test_median_se",
           "train_mse", "stop_reason", "stop_step", "best_iteration", "gate_ari_test", "frac_A071", "seconds", "key")


def export_rows(figure: str, profile: str, records: dict) -> list[dict[str, Any]]:
    """One row per cell of ``records`` (``{job: record}``): the columns :data:`COLUMNS`, sorted by
    method, K, n and run, or a question's own (:func:`~.registry.register_rows`)."""
    if figure in ROWS:
        return [{"figure": figure, "profile": profile, **row} for row in ROWS[figure](records)]
    rows = []
    for job, rec in sorted(records.items(), key=lambda kv: (kv[0].method, kv[0].K, kv[0].n, kv[0].run,
                                                             width_of(kv[0]) or 0)):
        m = rec["metrics"]
        rows.append({
            "figure": figure, "profile": profile, "method": job.method, "K": job.K, "n": job.n, "run": job.run,
            "gamma": getattr(job.data, "gamma", None),
            "width": width_of(job), "batch": network_of(job).batch if width_of(job) else None,
            **{k: m.get(k) for k in ("test_mse", "test_median_se", "train_mse", "stop_reason", "stop_step",
                                     "best_iteration", "gate_ari_test", "frac_A071")},
            "seconds": rec.get("timing", {}).get("seconds"), "key": job.key(),
        })
    return rows


def columns_of(figure: str) -> tuple[str, ...] | None:
    """The CSV columns of ``figure``'s export: :data:`COLUMNS`, or those a question's rows have."""
    return None if figure in ROWS else COLUMNS


def write_rows(rows: list[dict[str, Any]], fmt: str, columns: tuple[str, ...] | None = COLUMNS) -> str:
    """``rows`` as CSV (a header line, empty fields for missing values) or as a JSON list.
    ``columns``: the CSV columns (``None``: those the rows have, in order of first appearance)."""
    if fmt == "json":
        return json.dumps(rows, indent=1)
    check_choice(fmt, "format", ("csv", "json"))
    columns = columns if columns is not None else tuple(dict.fromkeys(k for row in rows for k in row))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if row.get(k) is None else row[k]) for k in columns})
    return buf.getvalue()
