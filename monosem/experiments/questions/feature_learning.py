"""Section 1's claim, judged: a global RFM metric gains less over the isotropic Laplace kernel as
the number of clusters K grows.

The *gain* of a fit is the Laplace kernel's test MSE over RFM's, RFM scored by the paper's rule
for global RFM: the best test MSE of iterations 0-3 (``verdicts.scored(..., "best")``; iteration 0
is the Laplace kernel itself, so both come from one fit on one draw of the data). The last
iteration alone would let one diverging late iteration at small K decide the verdict. :func:`gain_claim` judges "the gain shrinks as K grows" the way
:mod:`monosem.experiments.verdicts` judges every comparison of the book: it compares the gain at
the largest K with the gain at the smallest K,

* on the means over runs: mean gain at the largest K / mean gain at the smallest K < 1;
* run by run: gain_r(largest K) / gain_r(smallest K) < 1 in the runs that have both K.

It **reproduces** when the mean holds and the run-by-run comparison holds in at least
:data:`~monosem.experiments.verdicts.PAIRED_SHARE` of the runs, **does not reproduce** when both
fail in that share, and is otherwise **not settled**; with one run the verdict rests on that run.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..verdicts import Comparison

__all__ = ["CLAIM", "gain_claim"]

#: the paper's claim (Section 1), in one line
CLAIM = "RFM's gain over the Laplace kernel shrinks as K grows"


def gain_claim(gains: Mapping[tuple[int, int], float], *, n: int = 0) -> Comparison:
    """Judge :data:`CLAIM` on ``gains`` = ``{(K, run): Laplace MSE / RFM MSE}``.

    The comparison's ``a`` is the gain at the largest K and ``b`` the gain at the smallest K;
    its status and evidence are those of :class:`~monosem.experiments.verdicts.Comparison`
    with threshold 1 (the ratio is that of the gains: below 1, the gain shrank).
    """
    Ks = sorted({K for K, _ in gains})
    nan = float("nan")
    if len(Ks) < 2:
        return Comparison(CLAIM, "gain, largest K", "gain, smallest K", Ks[-1] if Ks else 0, n, 1.0, nan, nan, ())
    lo, hi = Ks[0], Ks[-1]
    runs = sorted({r for K, r in gains if K == lo} & {r for K, r in gains if K == hi})
    mean_hi = float(np.mean([gains[hi, r] for r in runs])) if runs else nan
    mean_lo = float(np.mean([gains[lo, r] for r in runs])) if runs else nan
    return Comparison(CLAIM, f"gain at K = {hi}", f"gain at K = {lo}", hi, n, 1.0, mean_hi, mean_lo,
                      tuple((r, gains[hi, r] / gains[lo, r]) for r in runs))
