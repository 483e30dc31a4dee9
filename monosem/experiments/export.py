"""The numbers behind a figure as a table one can download: one row per cell (CSV or JSON).

``python -m monosem export fig2 --profile cpu --format csv`` writes every cached cell of Figure 2
at the cpu profile; ``--recorded`` takes the cells shipped with the package instead (the long
run). Each row holds the cell's coordinates (method, K, n, run, network size), its metrics (test
MSE, median squared error, and for the MLPs the training MSE and why training stopped), its wall
time and its key, which names the result file and recomputes it (``monosem run``).

The pages that are not sweeps export too (:data:`PAGE_EXPORTS`): ``fig1`` (Figure 1's table, per
branch and seed, beside the paper's columns) and ``theorem2`` are computed at the profile;
``theorem1`` reads the record page 07 leaves in the cache at every run, or the package's recorded
paper-profile run with ``--recorded``.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from ..checks import check_choice
from .cells import network_of, width_of

__all__ = ["COLUMNS", "PAGE_EXPORTS", "export_rows", "write_rows", "figure1_rows", "theorem1_rows", "theorem2_rows",
           "page_record_path", "write_page_rows"]

#: the columns of an exported table, in order
COLUMNS = ("figure", "profile", "method", "K", "n", "run", "gamma", "width", "batch", "test_mse", "test_median_se",
           "train_mse", "stop_reason", "stop_step", "best_iteration", "gate_ari_test", "frac_A071", "seconds", "key")


def export_rows(figure: str, profile: str, records: dict) -> list[dict[str, Any]]:
    """One row per cell of ``records`` (``{job: record}``), sorted by method, K, n and run."""
    rows = []
    for job, rec in sorted(records.items(), key=lambda kv: (kv[0].method, kv[0].K, kv[0].n, kv[0].run,
                                                             width_of(kv[0]) or 0)):
        m = rec["metrics"]
        rows.append({
            "figure": figure, "profile": profile, "method": job.method, "K": job.K, "n": job.n, "run": job.run,
            "gamma": job.data.gamma,
            "width": width_of(job), "batch": network_of(job).batch if width_of(job) else None,
            **{k: m.get(k) for k in ("test_mse", "test_median_se", "train_mse", "stop_reason", "stop_step",
                                     "best_iteration", "gate_ari_test", "frac_A071")},
            "seconds": rec.get("timing", {}).get("seconds"), "key": job.key(),
        })
    return rows


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


# --- the pages that are not sweeps: Figure 1 and the Theorem 1 and 2 experiments ---------------

#: what ``export`` can write besides the sweep figures, and where the numbers come from
PAGE_EXPORTS = {
    "fig1": "computed at the profile (Figure 1's networks: seconds at smoke, minutes at cpu)",
    "theorem1": "the record page 07 writes at every run ($MONOSEM_CACHE/pages/), or --recorded",
    "theorem2": "computed at the profile (Section 4.2's separation experiment)",
}


def page_record_path(cache_root, name: str, profile: str):
    """Where a page that is not a sweep leaves its numbers at every run: ``<cache>/pages/<name>_<profile>.json``."""
    from pathlib import Path

    return Path(cache_root) / "pages" / f"{name}_{profile}.json"


def figure1_rows(profile: str) -> list[dict[str, Any]]:
    """Figure 1's table at ``profile``, one row per (activation branch, seed), beside the paper's
    cosine columns (``paper_*``, in percent as printed; its D columns are not legible)."""
    from ..data import figure1_model
    from ..profiles import get_profile
    from ..specialization import PAPER_FIGURE1, specialization_table
    from .specialization import figure1_data, train_figure1

    P = get_profile(profile)
    sizes, model = P.specialization, figure1_model()
    data = figure1_data(sizes)
    rows = []
    for act in ("relu", "gelu", "reglu", "swiglu"):
        run = train_figure1(sizes, act, data=data)
        for seed, net, err, lr in zip(run.seeds, run.models, run.test_mse, run.lrs):
            for r in specialization_table(net, model.directions):
                paper = PAPER_FIGURE1.get(r.branch, (None, None, None))
                rows.append({"figure": "fig1", "profile": P.name, "branch": r.branch, "seed": seed, "width": r.width,
                             "n_active": r.n_active, "frac_A071": r.frac_A071, "frac_A090": r.frac_A090,
                             "frac_D1": r.frac_D1, "frac_D2": r.frac_D2, "test_mse": float(err), "lr": lr,
                             "paper_n_active": paper[0], "paper_pct_A071": paper[1], "paper_pct_A090": paper[2]})
    return rows


def theorem2_rows(profile: str) -> list[dict[str, Any]]:
    """Section 4.2's separation experiment at ``profile``: one row per (K, A, n, method)."""
    from ..profiles import get_profile
    from .theorem2_separation import run_separation

    P = get_profile(profile)
    result = run_separation(P.theorem2)
    return [{"figure": "theorem2", "profile": P.name, **{k: v for k, v in row.items() if not isinstance(v, (list, dict))}}
            for row in result.rows]


def theorem1_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Page 07's record (``save_recorded`` payload) as rows, one ``section`` per experiment:
    ``flows`` (per K, R), ``coverage`` (per m), ``tracking`` (per epsilon), ``full_network``
    and ``perturbation`` (per target)."""
    res, profile = payload["results"], payload["profile"]
    base = {"figure": "theorem1", "profile": profile}
    rows = [{**base, "section": "flows", **f} for f in res["flows"]]
    rows += [{**base, "section": "coverage", "K": res["coverage"]["K"], **r} for r in res["coverage"]["rows"]]
    tr = res["tracking"]
    rows += [{**base, "section": "tracking", "K": tr["K"], "R": tr["R"], "m": tr["m"], "T": tr["T"], "eps": e,
              "tracking_error": err, "slope": tr["slope"]} for e, err in zip(tr["eps"], tr["errors"])]
    rows.append({**base, "section": "full_network", **res["full_network"]})
    rows += [{**base, "section": "perturbation", "target": k, "alpha": a, "one_cluster_fraction": v}
             for k, by_alpha in res["perturbation"].items() for a, v in by_alpha.items()]
    return rows


def write_page_rows(rows: list[dict[str, Any]], fmt: str) -> str:
    """Like :func:`write_rows`, with the columns the rows have (in order of first appearance)."""
    return write_rows(rows, fmt, columns=None)
