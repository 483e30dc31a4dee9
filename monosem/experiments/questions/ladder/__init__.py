"""Finding 1b at the paper's scale: what closes the MLP's gap to the per-cluster oracle at K = 50.

Figure 2's headline is that MLPs come "remarkably close" to the per-cluster oracles when the
clusters are many (Section 3.2). The ``long`` profile trains networks a quarter of the paper's
(width 1 024 and batch 1 024 against Appendix A.2's 4 096 / 4 096) at the paper's two smallest
training sizes, and there the best MLP stays several times the better oracle at K = 50. This
module declares the ladder that separates the candidate causes: starting from the ``long``
profile's network it moves **one knob at a time** to the paper's network, under the A.2 protocol
unchanged (its rates, 20 000-200 000 updates, stopping rules, kept checkpoint):

1. width 1 024 -> 2 048 -> 4 096 at batch 1 024, n = 50 000;
2. batch 1 024 -> 4 096 at width 4 096 (the paper's network), n = 50 000;
3. the paper's network at n = 100 000 and 200 000.

ReGLU (the better MLP of Figure 2) on every rung and ReLU on the paper's network and at the foot
(Figure 2's own ReLU cell, for the same network's comparison across scales); K = 50 the
question, K = 10 (where the MLP already matches the oracle) the control. The per-cluster oracles
(RFM and Laplace) have five runs at every n of the ladder; the networks run 0 on every rung and,
at K = 50, runs 1-4 where run 0 turned: the widest network at batch 1 024 and the paper's network
at n = 50 000 (:attr:`Rung.runs`; the control keeps run 0 above its foot, :attr:`Rung.control_runs`).

Every cell is an ordinary Figure 2 cell (the built-in ``mlp-*`` and ``oracle-*`` methods), so the
first rung *is* the ``long`` profile's Figure 2 network at n = 50 000 (five recorded runs), and an
oracle cell at n = 100 000 or 200 000 run 0 is the regime map's. The rungs beyond it train with
the training step's fastest revision (:data:`~monosem.train.step.FASTEST_STEP_REVISION`: the
same gradient to rounding, other last bits), which each cell's key names.

The package, one module per seam: ``cells`` (the rungs, the sizes, the cells and their
computation, registered on import), ``analysis`` (the tables and verdicts read from the records),
``figures`` (the plot) and ``words`` (the page's sentences and numbers).
"""

from __future__ import annotations

from .analysis import (ONE_CLUSTER_SHARE, ORACLE_FAIL_FACTOR, STOP_REASONS, gap_by_link, gap_frame, gap_robust, ladder_claims,
                       ladder_frame, network_summary, oracle_failures, rung_records, rung_verdicts, under_trained)
from .cells import (GAP, KNOBS, GapSpec, LadderSizes, Rung, compute_gap, gap_job, gap_jobs, ladder_jobs, ladder_sizes,
                    ready_gap_jobs, rung_of)
from .figures import plot_ladder
from .words import gap_robust_words, ladder_numbers, ladder_setup, oracle_failure_reading, robust_reading, run_reading

# beside the public names, read through the package (by the tests and page 04): the oracles and
# finding 1b's factor the ladder judges by, the ladder read along each network, the control's words
from ..sample_efficiency import ORACLE_FACTOR as ORACLE_FACTOR, ORACLES as ORACLES
from .words import _control_words as _control_words, ladder_reading as ladder_reading

__all__ = ["KNOBS", "Rung", "LadderSizes", "ladder_sizes", "ladder_jobs", "rung_of", "ladder_frame", "network_summary", "rung_records", "rung_verdicts",
           "under_trained", "plot_ladder", "ladder_numbers", "run_reading", "ladder_setup", "ladder_claims",
           "ready_gap_jobs",
           "STOP_REASONS", "GAP", "GapSpec", "gap_job", "compute_gap", "gap_jobs", "gap_frame", "gap_by_link", "gap_robust",
           "ONE_CLUSTER_SHARE", "robust_reading", "ORACLE_FAIL_FACTOR", "oracle_failures", "oracle_failure_reading", "gap_robust_words"]
