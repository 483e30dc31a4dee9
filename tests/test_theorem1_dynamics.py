"""Page 07: the simulations, and their record as one cell of the result store (its tables,
numbers and claims, the recorded paper-profile cell, the command line)."""

from __future__ import annotations

import json
import numpy as np
import pytest


def test_dynamics_tables_numbers_and_claims_read_a_page07_payload():
    from monosem.experiments.questions.theorem1_record import dynamics_claims, dynamics_numbers, dynamics_tables, recorded_header

    payload = {
        "profile": "paper", "timing": {"finished": "2026-11-30 20:00 UTC", "seconds": 1800.0},
        "machine": {"cpu_count": 2, "torch_threads": 2, "accelerator": None, "git_commit": "abc1234"},
        "metrics": {
            "t_max": 5e4,
            "flows": [{"K": 3, "R": 4.0, "m": 256, "converged": 1.0, "median_distance_times_R": 0.9198},
                      {"K": 3, "R": 32.0, "m": 256, "converged": 0.0, "median_distance_times_R": None}],
            "C_fit": 0.935, "chi2_p": {"3": 0.2},
            "coverage": {"K": 10, "pool": 270, "rows": [{"m": 10, "simulated": 0.1, "exact": 0.2, "bound": 0.0, "bound_exp": 0.0}]},
            "tracking": {"K": 3, "R": 4.0, "m": 64, "n_mc": 100000, "T": 50.0, "eps": [1e-2, 1e-3], "errors": [1e-3, 1e-5], "slope": 2.0},
            "full_network": {"eps": 3e-4, "loss_start": 0.5, "loss_end": 0.4, "t_half_drop": None, "interaction_rel_se": 0.01,
                             "t_most_specialized": 100.0, "one_cluster_most_specialized": 1.0, "one_cluster_end": 0.5},
            "perturbation": {"h2": {"0": 1.0, "1": 0.1}},
        },
    }
    head = recorded_header(payload)
    assert "30.0 min" in head and "commit abc1234" in head
    tables = dynamics_tables(payload["metrics"])
    assert tables["flows"].loc[(3, 32.0), "converged share"] == 0.0 and list(tables["tracking"].index) == [1e-2, 1e-3]
    numbers = dynamics_numbers(payload["metrics"])
    assert numbers["C_fit"] == "0.935" and numbers["conv_hi"] == "0 %" and numbers["slope"] == "2.00"
    lemma9, lemma8, lemma7 = dynamics_claims(payload["metrics"], "07_theorem1_dynamics", "paper")
    # one simulation each: the most it can show is "indicated (1 run)", and a miss on one run is "not settled"
    assert lemma9.label == "indicated (1 run)" and lemma8.verdict == "not settled" and lemma7.verdict == "not settled"
    assert (lemma9.width, lemma8.width, lemma7.profile, lemma7.runs) == (64, "up to 10 neurons", "paper", 1)


def test_dynamics_record_round_trip():
    """Page 07's record (schema in monosem.experiments.questions.theorem1_dynamics) is JSON-ready and its
    summary prints every part."""

    from monosem.experiments.questions.theorem1_record import dynamics_results, dynamics_tables

    rng = np.random.default_rng(0)
    flows = {(3, 4.0): {"conv": np.array([True, True, False, True]), "dist": np.full(4, 0.1), "labels": np.array([0, 1, 2, 0])}}
    res = dynamics_results(
        t_max=100.0, flows=flows, C_fit=0.93,
        coverage=dict(K=3, pool=np.array([0, 1, 0]), ms=np.arange(1, 7), simulated=np.linspace(0, 1, 6),
                      exact=np.linspace(0, 1, 6), bounds=np.zeros((6, 2))),
        tracking=dict(K=3, R=4.0, m=4, n_mc=10, T=5.0, eps=[1e-2, 1e-3], errors=[1e-3, 1e-5], slope=2.0, invariant=[1e-9, 1e-9]),
        full_network=dict(eps=1e-3, loss=np.array([0.5, 0.35, 0.3]), t=np.array([0.0, 1.0, 2.0]),
                          one_cluster=np.array([0.0, 1.0, 0.5]), interaction_rel_se=0.01),
        perturbation={(2, 0.0): rng.uniform(0.995, 1, 4), (2, 1.0): np.zeros(4), (4, 0.0): np.ones(4), (4, 1.0): np.ones(4)},
    )
    back = json.loads(json.dumps(res))
    assert back["flows"][0]["converged"] == 0.75 and back["full_network"]["t_half_drop"] == 1.0
    assert back["full_network"]["one_cluster_most_specialized"] == 1.0 and back["perturbation"]["h2"] == {"0": 1.0, "1": 0.0}
    tables = dynamics_tables(back)
    assert tables["perturbation"].loc["h2", "1"] == 0.0 and tables["tracking"]["sup tracking error"].tolist() == [1e-3, 1e-5]


def test_the_pages_simulations_check_lemmas_7_and_5_at_smoke_size():
    """Page 07's teacher-only flows (Lemma 7's sign and monotonicity checks hold for every
    neuron) and Lemma 5's C/R fit over them, from the module the page calls."""
    from monosem.experiments.questions import theorem1_dynamics as dyn
    from monosem.profiles import get_profile

    sizes = get_profile("smoke").theorem1
    checked = dyn.teacher_only_flows(sizes, seed=0, progress=False)
    assert list(checked.table.index) == dyn.flow_grid(sizes)
    assert checked.table["ζ u > 0"].all() and checked.table["ζ Φ rises"].all()
    fit = dyn.distance_fit(checked.summary, sizes.Ks[0])
    assert len(fit.Rs) == len(sizes.Rs) and 0 < fit.C < 2  # Lemma 5: C -> 1 as R grows
    cov = dyn.coverage(checked.summary, max(sizes.Ks), seed=0)
    assert cov["ms"][-1] <= 6 * cov["K"] and np.all(cov["bounds"][:, 0] <= cov["exact"] + 1e-12)


@pytest.mark.slow
def test_the_pages_text_and_record_come_from_one_run_of_every_simulation():
    """The page's printed checks and its record, at smoke size: one line per R of Lemma 5's fit,
    one per m of Lemma 8's coverage, one per eps of Lemma 9's tracking, and a record whose
    numbers are those of the text."""
    from monosem.device import get_device
    from monosem.experiments.questions import theorem1_dynamics as dyn
    from monosem.profiles import get_profile

    sizes = get_profile("smoke").theorem1
    checked = dyn.teacher_only_flows(sizes, seed=0, progress=False)
    fit = dyn.distance_fit(checked.summary, sizes.Ks[0])
    assert dyn.distance_fit_text(fit).count("Lemma 5:") == len(fit.Rs)
    cov = dyn.coverage(checked.summary, max(sizes.Ks), seed=0)
    assert dyn.coverage_text(cov).count("simulated") == sum(m <= cov["ms"][-1] for m in (cov["K"], 2 * cov["K"], 4 * cov["K"]))
    tr = dyn.tracking(sizes, 0, device=get_device(), progress=False)
    assert dyn.tracking_text(tr, "cpu").count("sup_t tracking error") == len(tr["eps"])
    fn = dyn.full_network(sizes, tr["omega0"], 0, device=get_device())
    assert "most specialized" in dyn.full_network_text(fn, sizes.m_full)
    perturb, _ = dyn.perturbation(sizes, 0)
    from monosem.experiments.questions import theorem1_record as t1

    record = t1.page_results(sizes, checked.summary, fit, cov, tr, fn, perturb)
    assert record["C_fit"] == fit.C and f"fitted C = {fit.C:.3f}" in dyn.summary_text(checked.summary, fit, tr, sizes.t_max)
    assert json.loads(json.dumps(record))["C_fit"] == fit.C  # JSON-ready


@pytest.mark.slow
def test_the_dynamics_are_one_cell_computed_by_the_cli_like_the_page(tmp_path):
    """``monosem run theorem1`` computes the cell page 07 stores (the same numbers: same seed,
    same simulations), and ``export`` writes its sections."""
    import csv
    import io
    from contextlib import redirect_stdout

    from monosem.__main__ import main
    from monosem.experiments.cache import ResultCache
    from monosem.experiments.questions import theorem1_record as t1
    from monosem.experiments.sweeps import sweep
    from monosem.profiles import get_profile

    smoke = get_profile("smoke")
    (job,) = sweep("theorem1", smoke)
    assert job == t1.dynamics_job(smoke) and job.config()["data"] == {"kind": "PopulationData", "K": max(smoke.theorem1.Ks),
                                                                        "n": 0, "run": 0}
    assert job.config()["spec"]["kind"] == "Theorem1Sizes"
    assert main(["run", "theorem1", "--profile", "smoke", "--cache", str(tmp_path)]) == 0
    computed = ResultCache(tmp_path).load(job)["metrics"]
    assert computed == json.loads(json.dumps(t1.compute_dynamics(job), default=float))
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["export", "theorem1", "--profile", "smoke", "--cache", str(tmp_path)]) == 0
    rows = list(csv.DictReader(out.getvalue().splitlines()))
    assert {r["section"] for r in rows} == {"flows", "coverage", "tracking", "full_network", "perturbation"}
    assert {r["key"] for r in rows} == {job.key()}


def test_the_recorded_paper_cell_is_the_paper_profiles_computation():
    """The paper profile's dynamics (recorded as one named file before they were a cell) are found
    as that cell, its own file, and were computed at the paper profile's sizes."""
    import json

    from monosem.experiments.questions import theorem1_record as t1
    from monosem.experiments.recorded import recorded_cells_dir
    from monosem.profiles import get_profile

    sizes = get_profile("paper").theorem1
    rec = t1.recorded_run("paper")
    (path,) = (recorded_cells_dir("paper") / t1.METHOD).glob("*.json")
    assert rec is not None and rec == json.loads(path.read_text()) and path.stem == rec["key"]
    res = rec["metrics"]
    assert res["t_max"] == sizes.t_max and res["tracking"]["eps"] == list(sizes.epsilons)
    assert {(f["K"], f["R"]) for f in res["flows"]} <= {(K, R) for K in sizes.Ks for R in sizes.Rs}
    assert all(f["m"] == sizes.m for f in res["flows"]) and res["tracking"]["n_mc"] == sizes.n_mc
    assert res["full_network"]["eps"] == min(sizes.epsilons) and set(res["perturbation"]) == {"h2", "h4"}
    assert t1.recorded_run("smoke") is None
