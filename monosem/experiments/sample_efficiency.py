"""The Section 3.2 page's computations: the paper's two findings judged on a grid of cells, and how
every MLP cell stopped.

The same functions judge the live profile and the recorded ``long`` run, so the two verdicts on
the page come from one definition:

* finding 1a: at the largest K, the best MLP beats global RFM;
* finding 1b: at the largest K, the best MLP is within 2x of the better oracle;
* finding 2: ReGLU beats ReLU at every K >= 10 (and SwiGLU beats GELU, where both ran).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from .results import Cell, lookup, verdict

__all__ = ["MLPS", "findings", "format_findings", "stopping_summary", "format_stopping"]

MLPS = ("mlp-relu", "mlp-gelu", "mlp-reglu", "mlp-swiglu")


def _mean(cells: list[Cell], method: str, K: int, n: int) -> float:
    c = lookup(cells, method, K, n)
    return c.mean if c is not None else float("nan")


def findings(cells: Iterable[Cell], Ks: Iterable[int], n: int) -> tuple[dict[int, dict[str, float]], dict[str, bool | None]]:
    """Per K at training size ``n``: the best MLP, global RFM, the better oracle and the gate
    ratios; and the verdicts of the findings (``None`` where a needed cell is missing)."""
    cells = list(cells)
    rows: dict[int, dict[str, float]] = {}
    for K in Ks:
        mlps = [v for v in (_mean(cells, m, K, n) for m in MLPS) if v == v]
        oracles = [v for v in (_mean(cells, m, K, n) for m in ("oracle-rfm", "oracle-laplace")) if v == v]
        rows[K] = {
            "mlp": min(mlps) if mlps else float("nan"),
            "rfm": _mean(cells, "rfm", K, n),
            "oracle": min(oracles) if oracles else float("nan"),
            "gate": _mean(cells, "mlp-reglu", K, n) / _mean(cells, "mlp-relu", K, n),
            "swi": _mean(cells, "mlp-swiglu", K, n) / _mean(cells, "mlp-gelu", K, n),
        }
    K_big = max(rows) if rows else None

    def known(*vals: float) -> bool:
        return all(v == v for v in vals)

    out: dict[str, bool | None] = {"1a": None, "1b": None, "2": None}
    if K_big is not None:
        r = rows[K_big]
        out["1a"] = bool(r["mlp"] < r["rfm"]) if known(r["mlp"], r["rfm"]) else None
        out["1b"] = bool(r["mlp"] < 2 * r["oracle"]) if known(r["mlp"], r["oracle"]) else None
        many = [rows[K]["gate"] for K in rows if K >= 10]
        out["2"] = bool(all(g < 1 for g in many)) if many and known(*many) else None
    return rows, out


def format_findings(rows: dict[int, dict[str, float]], verdicts: dict[str, bool | None], n: int) -> str:
    """The comparison table and the three verdicts as text."""
    lines = [f"n = {n}",
             f"{'K':>3} {'best MLP':>10} {'global RFM':>11} {'oracle':>9} {'MLP/oracle':>11} {'ReGLU/ReLU':>11} {'SwiGLU/GELU':>12}"]
    for K, r in rows.items():
        lines.append(f"{K:>3} {r['mlp']:>10.3g} {r['rfm']:>11.3g} {r['oracle']:>9.3g} {r['mlp'] / r['oracle']:>11.2f} "
                     f"{r['gate']:>11.2f} {r['swi']:>12.2f}")
    K_big = max(rows) if rows else "-"
    lines += [
        "",
        f"finding 1a (at K = {K_big} the best MLP beats global RFM):         {verdict(verdicts['1a'])}",
        f"finding 1b (at K = {K_big} the best MLP is within 2x of an oracle):  {verdict(verdicts['1b'])}",
        f"finding 2  (ReGLU beats ReLU at every K >= 10):                 {verdict(verdicts['2'])}",
    ]
    return "\n".join(lines)


def stopping_summary(records: dict) -> list[dict[str, Any]]:
    """One row per MLP cell: K, n, activation, width, training MSE of the kept checkpoint, stop
    step and the reason (target / plateau / cap / diverged; ``?`` for cells computed before the
    reason was recorded)."""
    rows = []
    for job, rec in sorted(records.items(), key=lambda kv: (kv[0].method, kv[0].K, kv[0].n, kv[0].run)):
        if not job.method.startswith("mlp-"):
            continue
        m, p = rec["metrics"], job.param_dict
        rows.append({"method": job.method, "K": job.K, "n": job.n, "run": job.run, "width": p["width"],
                     "train_mse": m["train_mse"], "test_mse": m["test_mse"], "stop_step": m["stop_step"],
                     "max_steps": p["max_steps"], "target": p["target_mse"], "reason": m.get("stop_reason", "?")})
    return rows


def format_stopping(rows: list[dict[str, Any]]) -> str:
    """How the MLP cells stopped: the count per reason, then every cell's training MSE in units of
    the target (the label-noise variance)."""
    if not rows:
        return "no MLP cells"
    counts = Counter(r["reason"] for r in rows)
    lines = [f"{len(rows)} MLP cells: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
             f"{'method':>11} {'K':>3} {'n':>7} {'run':>3} {'train MSE':>10} {'/ target':>9} {'stopped at':>11} {'reason':>8}"]
    for r in rows:
        lines.append(f"{r['method']:>11} {r['K']:>3} {r['n']:>7} {r['run']:>3} {r['train_mse']:>10.2e} "
                     f"{r['train_mse'] / r['target']:>9.1f} {r['stop_step']:>11} {r['reason']:>8}")
    return "\n".join(lines)


def eigenpro_solves(records: dict) -> list[dict[str, Any]]:
    """One row per EigenPro solve recorded in kernel cells: a global Laplace cell's one solve, a
    global RFM cell's one per iteration, and an oracle's or gated predictor's per cluster (gate)
    ``local_solves``: its epochs, step halvings, final training MSE and whether it reached the
    target. Cells recorded before the solves were kept have none."""
    rows = []
    for job, rec in sorted(records.items(), key=lambda kv: (kv[0].method, kv[0].K, kv[0].n)):
        m = rec["metrics"]
        # (cluster or None for a global fit, its solves, whether they are RFM iterations)
        fits: list[tuple[int | None, list, bool]] = [(None, [m["solve"]], False) if "solve" in m else (None, m.get("solves", []), True)]
        fits += [(k, s if isinstance(s, list) else [s], isinstance(s, list))
                 for k, s in enumerate(m.get("local_solves", [])) if s is not None]
        for cluster, solves, iterations in fits:
            for t, s in enumerate(solves):
                if s["solver"] == "eigenpro":
                    rows.append({"method": job.method, "K": job.K, "n": job.n, "cluster": cluster,
                                 "iteration": t if iterations else None, **s})
    return rows


def format_eigenpro_solves(rows: list[dict[str, Any]]) -> str:
    """:func:`eigenpro_solves` as a text table."""
    if not rows:
        return "no EigenPro solve recorded yet"
    lines = [f"{'method':<14} {'K':>3} {'n':>7} {'cluster':>7} {'it.':>3} {'epochs':>6} {'halvings':>8} {'train MSE':>10} {'reached 4e-4':>12}"]
    for r in rows:
        it = "" if r["iteration"] is None else str(r["iteration"])
        cl = "" if r.get("cluster") is None else str(r["cluster"])
        lines.append(f"{r['method']:<14} {r['K']:>3} {r['n']:>7} {cl:>7} {it:>3} {r['iterations']:>6} {r['step_halvings']:>8} "
                     f"{r['train_mse']:>10.2e} {'yes' if r['converged'] else 'no':>12}")
    return "\n".join(lines)
