"""The Section 3.3 page's computations: the paper's finding on MLP-gated local predictors judged on
a grid of cells (the live profile and the recorded ``long`` run use the same definition).

Finding: the MLP-gated local RFM beats global RFM at every K, and approaches the per-cluster
oracle. Beside it, the gate purity (adjusted Rand index of the learned gates against the true
clusters), which the paper does not report.
"""

from __future__ import annotations

from typing import Iterable

from .results import Cell, lookup, verdict

__all__ = ["gates_findings", "format_gates_findings"]


def _mean(cells: list[Cell], method: str, K: int, n: int) -> float:
    c = lookup(cells, method, K, n)
    return c.mean if c is not None else float("nan")


def gates_findings(cells: Iterable[Cell], ari: Iterable[Cell], Ks: Iterable[int], n: int) -> tuple[dict[int, dict[str, float]], bool | None]:
    """Per K at training size ``n``: gated local RFM, global RFM, the RFM oracle and the gate ARI;
    and whether the gated RFM beats global RFM at every K (``None`` if a cell is missing)."""
    cells, ari = list(cells), list(ari)
    rows = {K: {"gated": _mean(cells, "gated-rfm", K, n), "rfm": _mean(cells, "rfm", K, n),
                "oracle": _mean(cells, "oracle-rfm", K, n), "ari": _mean(ari, "gated-rfm", K, n)} for K in Ks}
    vals = [v for r in rows.values() for v in (r["gated"], r["rfm"])]
    ok = None if not rows or any(v != v for v in vals) else all(r["gated"] < r["rfm"] for r in rows.values())
    return rows, ok


def format_gates_findings(rows: dict[int, dict[str, float]], ok: bool | None, n: int) -> str:
    lines = [f"n = {n}",
             f"{'K':>3} {'gated RFM':>10} {'global RFM':>11} {'RFM oracle':>11} {'gated/global':>13} {'gated/oracle':>13} {'gate ARI':>9}"]
    for K, r in rows.items():
        lines.append(f"{K:>3} {r['gated']:>10.3g} {r['rfm']:>11.3g} {r['oracle']:>11.3g} {r['gated'] / r['rfm']:>13.2f} "
                     f"{r['gated'] / r['oracle']:>13.2f} {r['ari']:>9.2f}")
    lines += ["", f"gated local RFM beats global RFM at every K: {verdict(ok)}"]
    return "\n".join(lines)
