"""Section 3.3's claims in their readings (page 05): the words of the paper, each read more than one
way, every reading judged by the one rule on the same runs.

The paper: "using the clusters extracted from the MLP first-layer representation substantially
improves both Laplace and RFM over their global counterparts (Figure 4). In particular, the
resulting local RFM consistently outperforms global RFM and approaches the cluster-aware oracle.
These results show that the first-layer representation contains information that both separates
the clusters and identifies cluster-specific predictive features".

* "approaches the cluster-aware oracle" (page 05's row, primary: within 2× of the RFM oracle at
  every K): beside it, the share of the global RFM -> RFM oracle gap the gated RFM closes, at least
  :data:`~.finding_readings.MUCH`, on a linear and on a log scale;
* "substantially improves ... Laplace ... over [its] global counterpart": a row of its own,
  primary at least 20 % lower error (:data:`~.finding_readings.SUBSTANTIAL`) at every K, any
  improvement beside it;
* "separates the clusters": a row of its own on the learned gates' adjusted Rand index against the
  true clusters on the test set, primary at least :data:`SEPARATES_ARI` at every K, at least
  :data:`PARTLY_ARI` beside it.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Mapping

import numpy as np

from ..families.gated import GATED_LAPLACE, GATED_RFM
from ..families.kernels import LAPLACE, ORACLE_RFM, RFM
from ..verdicts import Claim, Part, Reading, per_run
from .finding_readings import MUCH, SUBSTANTIAL, _parts, gap_part
from .learned_gates import ORACLE_CLAIM, main_Ks
from .sample_efficiency import ORACLE_FACTOR

__all__ = ["ORACLE_FACTOR", "SUBSTANTIAL", "SEPARATES_ARI", "PARTLY_ARI", "LAPLACE_CLAIM", "SEPARATES_CLAIM", "oracle_readings", "ari_parts", "with_readings",
           "more_claims"]

#: "separates the clusters": the gates' adjusted Rand index against the true clusters at least this
SEPARATES_ARI = 0.9
#: a weaker reading: the gates agree with the clusters well beyond chance (ARI 0) and half-way to 1
PARTLY_ARI = 0.5
LAPLACE_CLAIM = ("\u201cUsing the clusters extracted from the MLP first-layer representation substantially improves both "
                 "Laplace and RFM over their global counterparts\u201d (§3.3; Laplace)")
SEPARATES_CLAIM = "\u201cThe first-layer representation contains information that \u2026 separates the clusters\u201d (§3.3; gate ARI)"


def oracle_readings(records: Mapping, Ks: Iterable[int], n: int, rule: str = "best") -> list[Reading]:
    """The gap-closed readings of "approaches the cluster-aware oracle" at every K of ``Ks``."""
    out = []
    for log in (False, True):
        parts = tuple(p for K in Ks if (p := gap_part(records, GATED_RFM, RFM, ORACLE_RFM, K, n, log, rule)).mean is not None)
        if parts:
            out.append(Reading(f"closes ≥ {MUCH:.0%} of the global RFM → RFM oracle gap at every K{' (log scale)' if log else ''}",
                               parts, why="\"approaches\" as the distance covered" + (", on the paper's log axes" if log else "")))
    return out


def ari_parts(records: Mapping, Ks: Iterable[int], n: int, low: float) -> tuple[Part, ...]:
    """The gated RFM cells' test-set gate ARI at each K: its mean over runs and each run's, holding
    at ``low`` or more."""
    out = []
    for K in Ks:
        ari = per_run(records, GATED_RFM, K, n, metric="gate_ari_test")
        if ari:
            out.append(Part(f"K = {K}", float(np.mean(list(ari.values()))), tuple(ari.values()), low=low, closed=True))
    return tuple(out)


def with_readings(claims: Iterable[Claim], records: Mapping, Ks: Iterable[int], n: int, rule: str = "best") -> list[Claim]:
    """Page 05's claims with "approaches the cluster-aware oracle" carrying its gap readings."""
    Ks = main_Ks(Ks)
    out = []
    for c in claims:
        if c.claim == ORACLE_CLAIM and (readings := oracle_readings(records, Ks, c.n, rule)):
            c = dataclasses.replace(c, reading=f"within {ORACLE_FACTOR:g}× of the RFM oracle at every K", readings=tuple(readings))
        out.append(c)
    return out


def more_claims(records: Mapping, Ks: Iterable[int], n: int, page: str, profile: str, width: int, batch: int,
                rule: str = "best") -> list[Claim]:
    """The two claims of Section 3.3 page 05's rows leave unjudged: the gated Laplace against global
    Laplace, and the gates separating the clusters (each with its second reading)."""
    Ks = main_Ks(Ks)
    out = []
    strict = _parts(records, GATED_LAPLACE, LAPLACE, Ks, n, threshold=SUBSTANTIAL, rule=rule)
    if strict:
        evidence = "; ".join(f"{p.label}: {p.mean:.2f}× on the means" for p in strict)
        any_better = Reading("gated Laplace below global Laplace at every K", _parts(records, GATED_LAPLACE, LAPLACE, Ks, n, rule=rule),
                             why="\"improves\" without \"substantially\"")
        out.append(dataclasses.replace(Claim.judged(page, LAPLACE_CLAIM, strict, evidence, profile=profile, width=width, batch=batch, n=n),
                                       reading=f"gated Laplace ≥ {1 - SUBSTANTIAL:.0%} below global Laplace at every K",
                                       readings=(any_better,)))
    strict = ari_parts(records, Ks, n, SEPARATES_ARI)
    if strict:
        evidence = "; ".join(f"{p.label}: ARI {p.mean:.3f} on the means" for p in strict)
        partly = Reading(f"gate ARI ≥ {PARTLY_ARI:g} at every K", ari_parts(records, Ks, n, PARTLY_ARI),
                         why="\"contains information that separates\": well beyond chance")
        out.append(dataclasses.replace(Claim.judged(page, SEPARATES_CLAIM, strict, evidence, profile=profile, width=width, batch=batch, n=n),
                                       reading=f"gate ARI ≥ {SEPARATES_ARI:g} at every K", readings=(partly,)))
    return out
