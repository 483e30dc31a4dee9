"""Figure 1's claim in its readings: "a significant number of first-layer neurons in trained MLPs
become monosemantic" (Section 3.1).

Page 03's verdict on each row of Figure 1 (:func:`.table.figure1_claims`, the primary reading:
both cosine shares of the *active* neurons within :data:`.table.REPRODUCE_PP` points of the
paper's) compares numbers. The paper's sentence is qualitative, and two other readings are as
defensible:

* **a significant share of the whole width** is specialized (A_j >= 0.71): at least
  :data:`SIGNIFICANT_SHARE` of all the units, active or not (the active set's size depends on the
  width and the initialization, page 03's ablations);
* **far above chance**: the specialized share of the active neurons is at least
  :data:`CHANCE_FACTOR` times the chance that a random direction reaches cosine 0.71 with one of
  the K predictive directions (:func:`chance_share`).
"""

from __future__ import annotations

from ...verdicts import Part, Reading

__all__ = ["SPECIALIZED_COSINE", "SIGNIFICANT_SHARE", "CHANCE_FACTOR", "chance_share", "readings_of", "PRIMARY"]

#: Figure 1's first cosine column: a neuron with A_j at least this is specialized
SPECIALIZED_COSINE = 0.71
#: "a significant number": at least this share of the whole width specialized
SIGNIFICANT_SHARE = 0.10
#: "monosemantic" against chance: at least this many times the share a random direction reaches
CHANCE_FACTOR = 10.0
#: the primary reading's name (page 03's rule)
PRIMARY = "both cosine shares within 10 points of the paper's"


def chance_share(d: int, K: int, cosine: float = SPECIALIZED_COSINE) -> float:
    """An upper bound on the chance that a direction drawn uniformly from the sphere in R^d has
    absolute cosine at least ``cosine`` with one of K orthonormal directions: K times the chance
    for one (the union bound), P(|u_1| >= t) = I_{1 - t^2}((d - 1)/2, 1/2) (a regularized
    incomplete beta function: u_1^2 ~ Beta(1/2, (d - 1)/2))."""
    from scipy.special import betainc

    return min(1.0, K * float(betainc((d - 1) / 2, 0.5, 1 - cosine ** 2)))


def readings_of(rows: list[dict], d: int, K: int) -> list[Reading]:
    """The other readings of one branch's Figure 1 row from its seeds' rows (``n_active``,
    ``width``, ``frac_A071``; :func:`~.base.table_rows`)."""
    if not rows:
        return []
    width_share = [r["frac_A071"] * r["n_active"] / r["width"] for r in rows]
    active_share = [r["frac_A071"] for r in rows]
    mean_width = sum(r["frac_A071"] * r["n_active"] for r in rows) / sum(r["width"] for r in rows)
    chance = chance_share(d, K)
    over_chance = [s / chance for s in active_share]
    return [Reading(f"≥ {SIGNIFICANT_SHARE:.0%} of the whole width with A ≥ {SPECIALIZED_COSINE}",
                    (Part("share of the width specialized", mean_width, tuple(width_share), low=SIGNIFICANT_SHARE, closed=True),),
                    why="\"a significant number of first-layer neurons\", counted over all of them"),
            Reading(f"≥ {CHANCE_FACTOR:g}× chance ({chance:.1e}) among the active neurons",
                    (Part("specialized share / chance", sum(active_share) / len(active_share) / chance, tuple(over_chance),
                          low=CHANCE_FACTOR, closed=True),),
                    why="\"monosemantic\" as against a random direction")]
