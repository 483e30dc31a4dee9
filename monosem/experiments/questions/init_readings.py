"""Finding 1b under each reading of Appendix A.2's unstated initialization: the cells.

Appendix A.2 names no initialization and no parameterization for the networks of Figure 2;
Appendix A.1 (the same authors, the same four architectures) trains under a "balanced
feature-learning initialization" and "the corresponding width-aware parameterization", and
Section 4's theory starts small with a zero output layer (Lemma 9). The readings below are the
candidates, each one :class:`~monosem.experiments.specs.NetworkInit` per width
(:meth:`A2Reading.start`): the book's A.2 default (:data:`~monosem.experiments.specs.A2_INIT`),
the readings page 03 compares for Figure 1, and the mean-field (muP) form of one hidden layer
under Adam.

Two sweeps, both on finding 1b's question (K = 50, the ladder's rungs, run 0 unless stated):

* ``init-screen``: every reading at the ladder's foot (the ``long`` profile's Figure 2 network,
  width 1 024, batch 1 024, n = 50 000), ReGLU, and ReLU for the two best (:data:`SCREEN_RELU`);
* ``init-paper``: the readings the screen keeps (:data:`PAPER_READINGS`) on the paper's network
  (4 096 x 4 096, n = 50 000), ReGLU and ReLU;
* ``init-gap``: a ladder gap cell (:func:`~.ladder.compute_gap`) of every network of both: page
  03's units per cluster and the per-cluster errors of each network against the oracles;
* ``init-best``: the best reading on the paper's network (:data:`BEST_READING`) for five runs, the
  control K under it (so that a reading cannot buy finding 1b by losing 1a or 2), and the
  ladder's widest rung at the foot's batch under it.

Under the default reading both are the ladder's own cells (one key, one computation). The
oracles of each cell's data are the ladder's too. What the cells show is read by
:mod:`.init_analysis` (tables, verdicts, figure) and put in words by :mod:`.init_words`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from ...checks import check_choice, check_int, check_positive
from ...models import INITS
from ...profiles import Profile, get_profile
from ...train.step import FASTEST_STEP_REVISION
from ..cache import Job
from ..families.kernels import ORACLE_LAPLACE, ORACLE_RFM
from ..families.networks import MLP_REGLU, MLP_RELU
from ..specs import MIXED_LINK_D, DataSpec, NetworkInit
from ..sweeps import Figure, method_spec, register_figure, with_solver
from .ladder import GAP, Rung, gap_job, ladder_sizes

__all__ = ["READOUT_RATES", "A2Reading", "READINGS", "register_reading", "DEFAULT_READING", "PAPER_READINGS", "reading_of", "same_as_default",
           "SCREEN_RELU", "LIKELY_READING", "BEST_READING", "BEST_NETWORK", "WIDE_RUNS", "InitSizes", "init_sizes", "reading_job", "screen_jobs", "paper_jobs",
           "best_jobs", "NETWORKS"]

#: the readout's Adam rate over the other tensors': ``"plain"`` 1; ``"mup"`` A.2's width over the
#: network's (muP under Adam, the rates tuned at the paper's width); ``"sqrt(d/m)"`` the ratio of
#: the readout's fan-in scale to the hidden layer's (sqrt(d / width))
READOUT_RATES = ("plain", "mup", "sqrt(d/m)")


@dataclass(frozen=True)
class A2Reading:
    """One reading of A.2's initialization: an :data:`~monosem.models.INITS` name, the hidden
    rows' scale, the gated value rows' scale, the readout's rate rule (:data:`READOUT_RATES`) and
    ``mean_field`` (the output is (1/width) sum_j a_j h_j + a_0, every rate as stated).
    ``source``: where it comes from, in a line."""

    name: str
    init: str = "pytorch"
    hidden_scale: float = 1.0
    value_scale: float = 1.0
    readout_rate: str = "plain"
    mean_field: bool = False
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        check_choice(self.init, "init", INITS)
        check_choice(self.readout_rate, "readout_rate", READOUT_RATES)
        check_positive(self.hidden_scale, "hidden_scale")
        check_positive(self.value_scale, "value_scale")

    def start(self, width: int, d: int = MIXED_LINK_D) -> NetworkInit:
        """The :class:`~monosem.experiments.specs.NetworkInit` of a network of ``width`` units on
        ``d`` inputs under this reading."""
        width = check_int(width, "width")
        paper_width = get_profile("paper").sample_efficiency.width
        rate = {"plain": 1.0, "mup": paper_width / width, "sqrt(d/m)": math.sqrt(d / width)}[self.readout_rate]
        return NetworkInit(init=self.init, hidden_scale=self.hidden_scale, value_scale=self.value_scale, readout_lr=rate,
                           output_scale=1.0 / width if self.mean_field else 1.0)


#: every reading, by name, in the order the page shows them (:func:`register_reading`)
READINGS: dict[str, A2Reading] = {}


def register_reading(reading: A2Reading) -> A2Reading:
    """Add a reading (its name must be new); the sweeps and the page then carry it."""
    if reading.name in READINGS:
        raise ValueError(f"reading name={reading.name!r} is already registered")
    READINGS[reading.name] = reading
    return reading


DEFAULT_READING = register_reading(A2Reading(
    "zero readout", source="PyTorch's hidden init, zero readout, every tensor at A.2's rate (Lemma 9's zero output layer); "
    "the book's A.2 default"))
register_reading(A2Reading("small init", hidden_scale=0.1, source="the same, hidden init x 0.1 (Section 4's small initialization)"))
register_reading(A2Reading("balanced x0.1", init="balanced", hidden_scale=0.1,
                           source="|a_j| = ||(w_j, b_j)||, random signs, hidden init x 0.1: Figure 1's reading of A.1 (page 03)"))
register_reading(A2Reading("muP", readout_rate="mup",
                           source="maximal update under Adam: readout rate x 4 096 / width (A.2's rates at the paper's width)"))
register_reading(A2Reading("mean-field", init="balanced", mean_field=True,
                           source="f = (1/m) sum_j a_j phi(.) + a_0, |a_j| = ||(w_j, b_j)|| with random signs, every rate as stated "
                           "(the mup package's MuReadout; Lemma 9's conserved ||w_j||^2 - a_j^2 starts at 0)"))
register_reading(A2Reading("readout rate x sqrt(d/m)", init="balanced", hidden_scale=0.1, readout_rate="sqrt(d/m)",
                           source="balanced x0.1 with the readout's rate x sqrt(d / width) (the NTK ratio under Adam; page 03's study)"))

#: the reading page 04 argues is the paper's most likely one (a hypothesis, from A.1's words and
#: Section 4's theory; the page sets its numbers beside the others')
LIKELY_READING = "mean-field"
#: the readings trained on the paper's network (the screen keeps them; :mod:`.init_analysis`
#: shows the screen they were kept by)
PAPER_READINGS = ("mean-field", "balanced x0.1", "readout rate x sqrt(d/m)")
#: the networks of both sweeps
NETWORKS = (MLP_REGLU, MLP_RELU)
#: the readings whose ReLU network the screen trains too: the two whose ReGLU network comes
#: closest to the oracle at the foot (the test of the recorded cells checks it)
SCREEN_RELU = ("muP", "balanced x0.1")
#: the reading ``init-best`` trains: of :data:`PAPER_READINGS`, the one whose better network has
#: the lowest ratio to the oracle on run 0 of the paper's network, and that network (the test of
#: the recorded cells checks both against every recorded run 0)
BEST_READING = "balanced x0.1"
BEST_NETWORK = MLP_REGLU
#: runs of the best reading on the ladder's widest rung at the foot's batch: run 0, and five runs
#: once run 0 comes within finding 1b's threshold there (the same test checks it)
WIDE_RUNS = 1


def reading_of(job: Job) -> A2Reading | None:
    """The registered reading a network cell was trained under (``None`` for an oracle, or for a
    start no registered reading gives at the cell's width)."""
    start = getattr(job.spec, "start", None)
    if start is None:
        return None
    return next((r for r in READINGS.values() if r.start(job.spec.width) == start), None)


def same_as_default(width: int) -> tuple[str, ...]:
    """The readings other than the default that start a network of ``width`` units exactly as the
    default does, so that the default's cells at that width are theirs (muP at the paper's width,
    where its readout rate factor, paper width / width, is 1)."""
    base = DEFAULT_READING.start(width)
    return tuple(name for name, r in READINGS.items() if name != DEFAULT_READING.name and r.start(width) == base)


@dataclass(frozen=True)
class InitSizes:
    """The sweeps of a profile: finding 1b's K, the screen's rung (the ladder's foot), the paper's
    network's rung, the widest rung at the foot's batch, the test-set size, the control K
    (``None`` where the ladder has one K) and the runs of a verdict (the ladder's oracles')."""

    K: int
    foot: Rung
    paper: Rung
    n_test: int
    wide: Rung
    control_K: int | None = None
    runs: int = 1


def init_sizes(profile: str | Profile) -> InitSizes | None:
    """The sweeps at ``profile``: the ladder's question K, its foot and its first rung at the
    paper's (largest) network; ``None`` where the profile has no ladder."""
    sizes = ladder_sizes(profile)
    if sizes is None:
        return None
    top = max(r.width * r.batch for r in sizes.rungs)
    paper = next(r for r in sizes.rungs if r.width * r.batch == top)
    foot = sizes.rungs[0]
    wide = next(r for r in sizes.rungs if (r.width, r.batch) == (paper.width, foot.batch))
    return InitSizes(K=sizes.Ks[0], foot=foot, paper=paper, n_test=sizes.n_test, wide=wide,
                     control_K=sizes.Ks[1] if len(sizes.Ks) > 1 else None, runs=sizes.oracle_runs)


def _data(K: int, n: int, run: int, n_test: int) -> DataSpec:
    return DataSpec(int(K), int(n), int(run), int(n_test))


def reading_job(P: Profile, method: str, reading: A2Reading, rung: Rung, K: int, run: int, n_test: int) -> Job:
    """The cell of ``method``'s network on ``rung`` under ``reading``. Under the default reading
    it is the ladder's own cell; under any other it trains with the fastest step revision."""
    spec = method_spec(method, P, (rung.width, rung.batch))
    if reading == DEFAULT_READING:
        if rung.step_revision is not None:
            spec = dataclasses.replace(spec, step_revision=int(rung.step_revision))
    else:
        spec = dataclasses.replace(spec, step_revision=FASTEST_STEP_REVISION, start=reading.start(rung.width))
    return Job(method, _data(K, rung.n, run, n_test), spec, P.name)


def _oracles(P: Profile, K: int, n: int, runs: range, n_test: int) -> list[Job]:
    jobs = []
    for r in runs:
        data = _data(K, n, r, n_test)
        jobs += [Job(m, data, with_solver(method_spec(m, P), m, data), P.name) for m in (ORACLE_RFM, ORACLE_LAPLACE)]
    return jobs


def screen_jobs(P: Profile) -> list[Job]:
    """``init-screen``: the oracles of run 0 at the foot, then every reading's ReGLU network there,
    then the ReLU network of the default and of :data:`SCREEN_RELU` (the default reading's are
    Figure 2's own cells)."""
    s = init_sizes(P)
    if s is None:
        return []
    jobs = _oracles(P, s.K, s.foot.n, range(1), s.n_test)
    jobs += [reading_job(P, MLP_REGLU, r, s.foot, s.K, 0, s.n_test) for r in READINGS.values()]
    jobs += [reading_job(P, MLP_RELU, READINGS[name], s.foot, s.K, 0, s.n_test) for name in (DEFAULT_READING.name, *SCREEN_RELU)]
    return list(dict.fromkeys(jobs))


def paper_jobs(P: Profile) -> list[Job]:
    """``init-paper``: the oracles of run 0 on the paper's network's data, then run 0 of each of
    :data:`PAPER_READINGS` (and the default, the ladder's cell), ReGLU then ReLU per reading."""
    s = init_sizes(P)
    if s is None:
        return []
    jobs = _oracles(P, s.K, s.paper.n, range(1), s.n_test)
    for name in (DEFAULT_READING.name, *PAPER_READINGS):
        jobs += [reading_job(P, method, READINGS[name], s.paper, s.K, 0, s.n_test) for method in NETWORKS]
    return list(dict.fromkeys(jobs))


def best_jobs(P: Profile) -> list[Job]:
    """``init-best``, most needed first: runs 1 .. of :data:`BEST_NETWORK` under
    :data:`BEST_READING` on the paper's network (run 0 is ``init-paper``'s), so that finding 1b
    has a verdict under it; :data:`WIDE_RUNS` runs on the widest rung at the foot's batch; the
    control K under it (every run of that network, run 0 of the other), so that findings 1a and 2
    are judged under it too; then the default reading's cells at the same sizes beside them (the
    ladder's, every run it has). The oracles of every run are the ladder's cells. The runner's
    plan orders network cells by n, then K (:func:`~..methods.plan`), so a worker that should
    train the verdict's runs before the control runs ``--K 50`` first."""
    s = init_sizes(P)
    if s is None:
        return []
    Ks = (s.K,) if s.control_K is None else (s.K, s.control_K)
    jobs = [j for K in Ks for j in _oracles(P, K, s.paper.n, range(s.runs), s.n_test)]
    for reading in (READINGS[BEST_READING], DEFAULT_READING):
        wide = WIDE_RUNS if reading.name == BEST_READING else s.wide.runs
        nets = (BEST_NETWORK,) if reading.name == BEST_READING else NETWORKS
        jobs += [reading_job(P, m, reading, s.paper, s.K, r, s.n_test) for m in nets for r in range(s.runs)]
        # the wide rung before the control: a quarter of the paper's step, and the rung where the
        # default came closest to the oracle
        jobs += [reading_job(P, BEST_NETWORK, reading, s.wide, s.K, r, s.n_test) for r in range(min(wide, s.runs))]
        if s.control_K is not None:
            control = s.runs if reading.name == BEST_READING else s.paper.control_runs or s.runs
            jobs += [reading_job(P, m, reading, s.paper, s.control_K, r, s.n_test)
                     for m in NETWORKS for r in range(control if m == BEST_NETWORK else 1)]
    return list(dict.fromkeys(jobs))


register_figure(Figure("init-screen", "Finding 1b's network under each reading of A.2's initialization, at the ladder's foot",
                       (ORACLE_RFM, ORACLE_LAPLACE, *NETWORKS), init_sizes, jobs=screen_jobs))
register_figure(Figure("init-paper", "Finding 1b on the paper's network under the readings the screen keeps",
                       (ORACLE_RFM, ORACLE_LAPLACE, *NETWORKS), init_sizes, jobs=paper_jobs))
register_figure(Figure("init-best", "Finding 1b, and the control K, under the best reading of A.2's initialization: five runs",
                       (ORACLE_RFM, ORACLE_LAPLACE, *NETWORKS), init_sizes, jobs=best_jobs))


def gap_cells(P: Profile) -> list[Job]:
    """``init-gap``: the gap cell of every network of ``init-screen`` and ``init-paper``, and of
    ``init-best``'s at the question's K (under the default reading these are the ladder's own gap
    cells) and, under the best reading, at the control K too: there the oracle of one run can fail
    on one cluster, and its ratio of means then says more about that cluster than about the MLP
    (the default reading's control networks have none, as on the ladder: their weights are not kept)."""
    s = init_sizes(P)
    if s is None:
        return []
    nets = [j for j in dict.fromkeys(screen_jobs(P) + paper_jobs(P) + best_jobs(P)) if j.method in NETWORKS]
    return [gap_job(j) for j in nets
            if j.K == s.K or (j.K == s.control_K and (found := reading_of(j)) is not None and found.name == BEST_READING)]


register_figure(Figure("init-gap", "Every network of the readings against the oracles, cluster by cluster",
                       (GAP,), init_sizes, jobs=gap_cells))
