"""The cost model's estimates."""

from __future__ import annotations

import pytest
from monosem.experiments.sweeps import sweep


def test_paper_cost_estimate_scales_by_the_cost_model():
    from monosem.experiments.estimate import paper_cost_estimate

    jobs = [j for j in sweep("fig2", "cpu") if j.method in ("laplace", "mlp-relu")]
    n_max = max(j.n for j in jobs)
    records = {j: {"timing": {"seconds": 1.0 if j.n == n_max else 99.0}} for j in jobs}
    est = paper_cost_estimate(records, "fig2", "cpu")
    paper_ns = (20_000, 50_000, 100_000, 200_000)
    assert est["laplace"] == pytest.approx(4 * 5 * sum((n / n_max) ** 2 for n in paper_ns))
    from monosem.profiles import get_profile

    se, pse = get_profile("cpu").sample_efficiency, get_profile("paper").sample_efficiency
    ratio = (pse.width * pse.batch * pse.max_steps) / (se.width * se.batch * se.max_steps)
    assert est["mlp-relu"] == pytest.approx(4 * 4 * 5 * ratio)
    assert "bayes" not in est


def test_remaining_seconds_charges_a_missing_cell_its_other_runs_mean():
    from monosem.experiments.estimate import remaining_seconds

    jobs = sweep("fig2", "long", Ks=[2], ns=[20_000], methods=["laplace", "mlp-relu"])
    by = {(j.method, j.run): j for j in jobs}
    measured = {by[("laplace", 0)]: {"timing": {"seconds": 100.0}}, by[("laplace", 1)]: {"timing": {"seconds": 300.0}},
                by[("mlp-relu", 0)]: {"metrics": {}}}  # a record without its timing measures nothing
    missing = [by[("laplace", 2)], by[("laplace", 3)], by[("mlp-relu", 1)]]
    assert remaining_seconds(missing, measured) == (400.0, 1)
    # another K, size or method is another cell
    other = sweep("fig2", "long", Ks=[10], ns=[20_000], methods=["laplace"], runs=[2])
    assert remaining_seconds(other, measured) == (0.0, 1)


def test_core_seconds_is_the_cpu_time_of_a_one_thread_cpu_cell():
    from monosem.experiments.estimate import core_seconds

    paused = {"timing": {"seconds": 900.0, "cpu_seconds": 100.0, "threads": 1, "device": "cpu"}}
    assert core_seconds(paused) == 100.0  # the wall time also counts the time the process waited
    assert core_seconds({"timing": {"seconds": 900.0, "cpu_seconds": 100.0, "threads": 1, "device": "cuda"}}) == 900.0
    assert core_seconds({"timing": {"seconds": 900.0, "cpu_seconds": 1500.0, "threads": 2, "device": "cpu"}}) == 900.0
    assert core_seconds({"timing": {"seconds": 900.0}}) == 900.0 and core_seconds({"metrics": {}}) is None


def test_a_network_no_run_measured_is_bounded_at_its_cap_by_the_same_network_elsewhere():
    from monosem.experiments.estimate import capped_network_seconds

    jobs = sweep("fig2", "long", Ks=[2, 10], ns=[20_000], methods=["laplace", "mlp-relu"])
    by = {(j.method, j.K, j.run): j for j in jobs}
    net = by[("mlp-relu", 2, 0)]
    measured = {net: {"timing": {"seconds": 50.0}, "metrics": {"stop_step": 25_000}},
                by[("laplace", 2, 0)]: {"timing": {"seconds": 9.0}}}
    cap = net.spec.max_steps * 50.0 / 25_000
    # K = 10's network: no run of it measured, the same network at K = 2 is; a run of the measured
    # cell is left to remaining_seconds; a kernel is never bounded this way
    missing = [by[("mlp-relu", 10, 0)], by[("mlp-relu", 10, 1)], by[("mlp-relu", 2, 1)], by[("laplace", 10, 0)]]
    assert capped_network_seconds(missing, measured) == (pytest.approx(2 * cap), 2)
    assert capped_network_seconds(missing, {}) == (0.0, 0)


def test_a_network_is_charged_its_other_runs_updates_at_its_speed_measured_in_cpu_time():
    from monosem.experiments.estimate import remaining_seconds

    jobs = sweep("fig2", "long", Ks=[2, 10], ns=[20_000], methods=["mlp-relu"])
    by = {(j.K, j.run): j for j in jobs}
    cpu = {"device": "cpu", "threads": 1}
    measured = {
        # run 0 at K = 10: a wall time only (waits for a shared core counted), 40 000 updates
        by[(10, 0)]: {"timing": {"seconds": 900.0}, "metrics": {"stop_step": 40_000}},
        # the same network at K = 2, measured in CPU time: 2 ms per update
        by[(2, 0)]: {"timing": {**cpu, "seconds": 90.0, "cpu_seconds": 60.0}, "metrics": {"stop_step": 30_000}},
    }
    seconds, unknown = remaining_seconds([by[(10, 1)], by[(2, 1)]], measured)
    assert unknown == 0 and seconds == pytest.approx(40_000 * 0.002 + 60.0)
    # with no CPU-time measurement of the network anywhere, its wall time per update
    del measured[by[(2, 0)]]
    assert remaining_seconds([by[(10, 1)]], measured) == (pytest.approx(900.0), 0)
