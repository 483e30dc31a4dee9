"""What one cell computes: local solves, step revisions, the noise level."""

from __future__ import annotations

import pytest
from monosem.experiments.cache import ResultCache
from monosem.experiments.sweeps import sweep


def test_oracle_and_gated_cells_record_each_local_solve(tmp_path):
    """Per-cluster fits keep their solves (one per cluster; RFM one per iteration), so a cluster
    that EigenPro stopped short can be told from a converged one."""
    from monosem.experiments.methods import compute_many

    jobs = sweep("fig4", "smoke", Ks=[2], methods=["oracle-rfm", "gated-laplace"])[:2]
    assert {j.method for j in jobs} == {"oracle-rfm", "gated-laplace"}
    for job, m in zip(jobs, compute_many(jobs, cache=ResultCache(tmp_path))):
        local = m["local_solves"]
        assert len(local) == job.K, job.label()
        for s in local:
            fits = s if job.method == "oracle-rfm" else [s]
            assert len(fits) == (4 if job.method == "oracle-rfm" else 1)
            assert all(f["solver"] in ("exact", "eigenpro", "cg") and f["iterations"] >= 1 for f in fits)


def test_a_checkpoint_of_another_step_revision_is_not_resumed(tmp_path):
    """The fingerprint names the revision (revision 1's fingerprint is as before revisions)."""
    from monosem.models import MLPStack
    import torch

    from monosem.train import TrainData, a2_config, train

    x, y = torch.randn(64, 5), torch.randn(64)
    ckpt = tmp_path / "run.pt"
    cfg = a2_config("relu", min_steps=0, max_steps=4, batch=16, eval_every=2, step_revision=2)
    train(MLPStack(5, 8, "relu", [0]), TrainData(x, y), cfg, checkpoint=ckpt, progress=False)
    saved = torch.load(ckpt, weights_only=True)
    assert saved["fingerprint"]["config"]["step_revision"] == 2
    with pytest.raises(ValueError, match="different arguments"):
        train(MLPStack(5, 8, "relu", [0]), TrainData(x, y), a2_config("relu", min_steps=0, max_steps=4, batch=16, eval_every=2, step_revision=1),
              checkpoint=ckpt, progress=False)
    one = tmp_path / "one.pt"
    train(MLPStack(5, 8, "relu", [0]), TrainData(x, y), a2_config("relu", min_steps=0, max_steps=4, batch=16, eval_every=2, step_revision=1),
          checkpoint=one, progress=False)
    assert "step_revision" not in torch.load(one, weights_only=True)["fingerprint"]["config"]


def test_one_home_for_the_noise_level():
    import inspect

    from monosem.data import LABEL_NOISE_VARIANCE
    from monosem.experiments.specs import NetworkSpec, SolverSpec
    from monosem.experiments.sweeps import figure_of
    from monosem.kernels import LaplaceKernelRegressor
    from monosem.train import a2_config

    # one name: the A.2 stopping target, the kernel solves' target and Figure 4's floor read it
    target = inspect.signature(LaplaceKernelRegressor).parameters["target_mse"].default
    assert LABEL_NOISE_VARIANCE == 4e-4 == target == a2_config("relu").target_mse == figure_of("fig4").floor
    assert NetworkSpec.__dataclass_fields__["target_mse"].default == SolverSpec.__dataclass_fields__["target_mse"].default == 4e-4


def test_a_gated_cell_trains_its_missing_source_network_and_records_its_time(tmp_path):
    from monosem.experiments.families.gated import compute_gated, source_job
    from monosem.experiments.methods import networks_to_retrain

    cache = ResultCache(tmp_path)
    (job,) = sweep("fig4", "smoke", Ks=[2], methods=["gated-laplace"], runs=[0])
    assert networks_to_retrain([job], cache) == [source_job(job)]
    compute_gated(job, cache)
    timing = cache.load(source_job(job))["timing"]
    assert timing["threads"] >= 1 and timing["cpu_seconds"] > 0 and timing["seconds"] > 0
    assert networks_to_retrain([job], cache) == []


def test_a_global_rfm_cell_checkpoints_beside_the_cache_and_cleans_up(tmp_path, laplace_fits):
    """The cell's fit is checkpointed after every iteration under its key, resumes from there
    with the same metrics, and leaves no checkpoint once computed."""
    from monosem.experiments.cache import EARLIER_SECONDS
    from monosem.experiments.methods import compute

    job = sweep("fig2", "smoke", Ks=[10], methods=["rfm"])[0]
    cache = ResultCache(tmp_path)
    ckpt = tmp_path / "checkpoints" / f"{job.key()}-rfm.pt"
    whole = compute(job, cache)
    assert not ckpt.exists() and whole[EARLIER_SECONDS] == 0
    laplace_fits.interrupt_at(4)
    with pytest.raises(KeyboardInterrupt):
        compute(job, cache)
    assert ckpt.exists()
    laplace_fits.count()
    resumed = compute(job, cache)
    assert not ckpt.exists() and resumed.pop(EARLIER_SECONDS) > 0
    whole.pop(EARLIER_SECONDS)
    strip = lambda m: {k: v for k, v in m.items() if not k.startswith("_")}  # noqa: E731
    assert strip(resumed) == strip(whole)


def test_an_rfm_oracle_cell_checkpoints_every_cluster_and_cleans_up(tmp_path, laplace_fits):
    """An RFM oracle checkpoints each cluster's fit after every iteration: a finished cluster is
    restored, the interrupted one resumes after its last finished iteration; the metrics equal an
    uninterrupted fit's and no checkpoint is left once computed. A Laplace oracle writes none."""
    from monosem.experiments.cache import EARLIER_SECONDS
    from monosem.experiments.methods import compute

    job, laplace = sweep("fig2", "smoke", Ks=[10], methods=["oracle-rfm", "oracle-laplace"], runs=[0], ns=[500])
    cache, folder = ResultCache(tmp_path), tmp_path / "checkpoints"
    whole = compute(job, cache)
    assert whole[EARLIER_SECONDS] == 0 and not list(folder.glob("*"))
    laplace_fits.interrupt_at(6)  # cluster 1's iteration 1: cluster 0's 4 fits are done
    with pytest.raises(KeyboardInterrupt):
        compute(job, cache)
    assert sorted(p.name for p in folder.glob("*")) == [f"{job.key()}-oracle-{k}.pt" for k in (0, 1)]
    laplace_fits.count()
    resumed = compute(job, cache)
    assert laplace_fits.calls == 4 * job.K - 5 and not list(folder.glob("*"))
    assert resumed.pop(EARLIER_SECONDS) > 0
    whole.pop(EARLIER_SECONDS)
    strip = lambda m: {k: v for k, v in m.items() if not k.startswith("_")}  # noqa: E731
    assert strip(resumed) == strip(whole)
    compute(laplace, cache)
    assert not list(folder.glob("*"))
