"""Finding 1b's scale ladder: one knob per rung, the long profile's own cells at its foot, the
paper's network at its top, and every network's stop reason in its table."""

from __future__ import annotations

import dataclasses

import pytest

from monosem.experiments.cache import ResultCache
from monosem.experiments.figures import run_figure
from monosem.experiments.questions import ladder
from monosem.experiments.sweeps import sweep
from monosem.profiles import get_profile
from monosem.train.step import FASTEST_STEP_REVISION

_KNOB_FIELDS = {"width": ("width",), "batch": ("batch",), "n": ("n",)}


@pytest.mark.parametrize("profile", ["smoke", "long"])
def test_every_rung_moves_one_knob(profile):
    rungs = ladder.ladder_sizes(profile).rungs
    assert rungs[0].knob == "start"
    for before, rung in zip(rungs, rungs[1:]):
        moved = {f for f in ("width", "batch", "n") if getattr(before, f) != getattr(rung, f)}
        assert moved == set(_KNOB_FIELDS[rung.knob]), (before, rung)


def test_the_long_ladder_runs_from_the_long_network_to_the_papers():
    long, paper = get_profile("long").sample_efficiency, get_profile("paper").sample_efficiency
    sizes = ladder.ladder_sizes("long")
    first, top = sizes.rungs[0], sizes.rungs[-1]
    assert (first.width, first.batch, first.n) == (long.width, long.batch, max(long.ns))
    assert (top.width, top.batch, top.n) == (paper.width, paper.batch, max(paper.ns))
    assert [r.n for r in sizes.rungs if r.knob == "n"] == [n for n in paper.ns if n > max(long.ns)]
    assert sizes.Ks == (50, 10) and sizes.oracle_runs == 5
    # the paper's network at the long profile's largest n has five runs, ReLU beside ReGLU
    paper_net = next(r for r in sizes.rungs if r.knob == "batch")
    assert paper_net.runs == 5 and paper_net.relu


def test_the_foot_of_the_ladder_is_the_long_profiles_figure2_cell():
    """Same keys, so the five recorded runs of Figure 2 are the first rung's; the rungs above
    train with the fastest step revision, which their keys name."""
    jobs = ladder.ladder_jobs(get_profile("long"))
    fig2 = set(sweep("fig2", "long", Ks=[50], ns=[50_000], methods=["mlp-reglu", "oracle-rfm", "oracle-laplace"]))
    foot = {j for j in jobs if j.K == 50 and j.n == 50_000 and (not j.method.startswith("mlp-") or j.spec.width == 1_024)}
    assert foot == fig2
    above = [j for j in jobs if j.method.startswith("mlp-") and j.spec.width > 1_024]
    assert above and all(j.spec.step_revision == FASTEST_STEP_REVISION for j in above)
    regime = set(sweep("regime", "long", Ks=[50], ns=[200_000], methods=["oracle-rfm"]))
    assert regime <= set(jobs)
    # run 0 of every rung comes before any further run
    runs = [j.run for j in jobs if j.method.startswith("mlp-") and j.K == 50]
    assert runs == sorted(runs)


@pytest.mark.slow
def test_the_smoke_ladder_runs_and_reports_how_every_network_stopped(tmp_path):
    cache = ResultCache(tmp_path)
    records = run_figure("ladder", "smoke", cache=cache, n_jobs=1, progress=False)
    frame = ladder.ladder_frame(records, "smoke")
    sizes = ladder.ladder_sizes("smoke")
    assert len(frame) == len(sizes.rungs) + sum(r.relu for r in sizes.rungs)
    stops = frame[[f"stopped: {s}" for s in ladder.STOP_REASONS]].sum(axis=1)
    assert (stops == frame["runs"]).all()
    assert (frame["MLP / oracle"] > 0).all()
    verdicts = ladder.rung_verdicts(records, "smoke", K=10)
    assert [r for r, _ in verdicts] == list(sizes.rungs)
    assert all(c.runs == 1 and c.status in ("reproduces", "does not reproduce") for _, c in verdicts)


def test_a_rung_rejects_a_bad_knob_or_size():
    with pytest.raises(ValueError, match="knob"):
        ladder.Rung("depth", 64, 64, 500)
    with pytest.raises((ValueError, TypeError), match="width"):
        ladder.Rung("width", 0, 64, 500)
    assert dataclasses.replace(ladder.Rung("n", 64, 64, 500), n=1_000).label.endswith("1\u2009000")
