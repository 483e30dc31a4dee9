"""Page 10, question 3: the explicit mixture of experts against dense MLPs at matched parameters
and FLOPs (the sweep ``moe``, its cells, its analysis and its cost)."""

import dataclasses
import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from monosem.experiments.questions import experts  # noqa: E402
from monosem.experiments.cache import Job, ResultCache  # noqa: E402
from monosem.experiments.specs import DataSpec  # noqa: E402
from monosem.experiments.estimate import page_seconds  # noqa: E402
from monosem.experiments.figures import plot_figure, run_figure  # noqa: E402
from monosem.experiments.specs import MIXED_LINK_D  # noqa: E402
from monosem.experiments.families.mixtures import load_moe, moe_dense_widths, moe_expert_width, trained_moe  # noqa: E402
from monosem.experiments.sweeps import method_spec, sweep  # noqa: E402
from monosem.models import forward_flops, parameter_count  # noqa: E402
from monosem.profiles import get_profile  # noqa: E402

FIELDS = {"test_mse", "test_median_se", "train_mse", "best_step", "stop_step", "stop_reason", "train_curve",
          "router_ari", "expert_load", "n_parameters", "forward_flops"}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """The smoke sweep, run once in a fresh cache: (cache, records)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TQDM_DISABLE", "1")
        cache = ResultCache(tmp_path_factory.mktemp("moe"))
        records = run_figure("moe", "smoke", cache=cache, n_jobs=1, progress=False)
    return cache, records


@pytest.mark.slow
def test_smoke_sweep_end_to_end(smoke):
    cache, records = smoke
    P = get_profile("smoke")
    moes = {j: rec["metrics"] for j, rec in records.items() if j.method == "moe-relu"}
    assert len(moes) == len(P.moe.Ks) * len(P.moe.ns) * P.moe.runs
    for job, m in moes.items():
        assert FIELDS <= set(m) and job.spec.n_experts == job.K  # E = K, one expert per cluster
        assert -1 <= m["router_ari"] <= 1 and math.isfinite(m["test_mse"])
        assert len(m["expert_load"]) == job.K and sum(m["expert_load"]) == pytest.approx(1.0)
        assert m["n_parameters"] == parameter_count("moe", MIXED_LINK_D, job.spec.network.width, "relu", job.K)
        assert m["forward_flops"] == forward_flops("moe", MIXED_LINK_D, job.spec.network.width, "relu", job.K)
        assert m["stop_reason"] in ("target", "plateau", "cap", "diverged") and m["train_curve"]
        assert (cache.root / "models" / f"{job.key()}.pt").exists()
    assert not list((cache.root / "checkpoints").glob("*.pt"))  # done: no checkpoint left behind
    rows = experts.moe_rows(records)
    assert [(r["K"], r["n"]) for r in rows] == [(K, n) for K in P.moe.Ks for n in P.moe.ns]
    for r in rows:
        assert all(r[f"{a}_{m}"] is not None for a in ("relu", "reglu") for m in ("params", "flops"))
    # the table: one row per (K, n), its numbers as numbers, the same as the rows'
    df = experts.moe_frame(rows)
    assert df.index.names == ["K", "n"] and list(df.index) == [(r["K"], r["n"]) for r in rows]
    assert df["MoE test MSE"].tolist() == [r["moe"] for r in rows]
    assert df["ReGLU =FLOPs test MSE"].tolist() == [r["reglu_flops"] for r in rows]
    assert df["ReLU =params width"].tolist() == [r["relu_params_width"] for r in rows]
    assert df["experts used"].tolist() == [r["experts_used"] for r in rows] and df["runs"].dtype.kind == "i"
    assert df["largest expert load (%)"].tolist() == pytest.approx([100 * r["max_load"] for r in rows])
    text = "\n".join([experts.moe_findings(rows), experts.moe_accounting(P)])
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "router ARI" in text and "matched FLOPs" in text
    fig, axes = plt.subplots(1, len(P.moe.Ks), squeeze=False)
    experts.plot_moe(rows, list(axes[0]))
    plt.close(fig)
    # the CLI's plot (plot_figure) draws the same panels, the two dense networks kept apart
    fig = plot_figure("moe", P, records=records)
    labels = {t.get_text() for t in fig.axes[0].get_legend().get_texts()}
    assert sum("(params)" in x for x in labels) == 2 and sum("(FLOPs)" in x for x in labels) == 2
    plt.close(fig)


@pytest.mark.parametrize("profile", ["smoke", "cpu", "gpu", "paper", "long"])
def test_matched_widths_really_match(profile):
    """Every dense cell of the sweep has a matched width, and the match is the closest count
    (what matched_dense_width guarantees: within half a width step of the mixture's count)."""
    P = get_profile(profile)
    d = MIXED_LINK_D
    jobs = sweep("moe", P)
    assert len(jobs) == len(set(jobs))
    for K in P.moe.Ks:
        m = moe_expert_width(K, P)
        widths = moe_dense_widths(K, P, m)
        target = {"params": parameter_count("moe", d, m, "relu", K), "flops": forward_flops("moe", d, m, "relu", K)}
        for (act, match), w in widths.items():
            count = parameter_count if match == "params" else forward_flops
            step = count("mlp", d, w + 1, act) - count("mlp", d, w, act)
            assert abs(count("mlp", d, w, act) - target[match]) <= step / 2
        dense = {(j.method, j.spec.width) for j in jobs if j.K == K and j.method.startswith("mlp-")}
        assert dense == {(f"mlp-{a}", w) for (a, _), w in widths.items()}
        assert {j.spec.network.width for j in jobs if j.K == K and j.method == "moe-relu"} == {m}
    # the rule: m's mixture has the parameter count closest to Figure 2's ReLU network
    ref = parameter_count("mlp", d, P.sample_efficiency.width, "relu")
    for K in P.moe.Ks:
        m = moe_expert_width(K, P)
        gap = abs(parameter_count("moe", d, m, "relu", K) - ref)
        assert all(gap <= abs(parameter_count("moe", d, k, "relu", K) - ref) for k in (m - 1, m + 1) if k >= 1)


def test_dense_cell_at_figure2_settings_is_the_figure2_cell():
    """A dense cell is keyed by what it computes only: at Figure 2's width it is Figure 2's cell,
    whichever comparison asked for it; the mixture follows Figure 2's protocol."""
    cpu = get_profile("cpu")
    se = cpu.sample_efficiency
    # widen Figure 2's network to the width matched to K = 10 by parameters (m fixed as in cpu)
    m = moe_expert_width(10, cpu)
    w = moe_dense_widths(10, cpu, m)[("relu", "params")]
    P = dataclasses.replace(cpu, sample_efficiency=dataclasses.replace(se, width=w),
                            moe=dataclasses.replace(cpu.moe, expert_widths=((10, m), (50, moe_expert_width(50, cpu)))))
    moe_dense = {j.key() for j in sweep("moe", P, Ks=[10], methods=["mlp-relu"]) if j.spec.width == w}
    fig2 = {j.key() for j in sweep("fig2", P, Ks=[10], methods=["mlp-relu"])}
    assert moe_dense and moe_dense <= fig2
    # at the real cpu profile, a dense cell of Figure 2's width made the sweep's way is Figure 2's
    made = Job("mlp-relu", DataSpec(10, 5_000, 0, cpu.moe.n_test), method_spec("mlp-relu", cpu, (se.width, se.batch)), "cpu")
    assert made.key() in {j.key() for j in sweep("fig2", cpu)}
    # the mixture: Figure 2's A.2 protocol and the ReLU rate, plus its own settings (not the
    # hand-derived step's revision: a mixture trains through autograd)
    job = next(j for j in sweep("moe", cpu) if j.method == "moe-relu")
    ref = dataclasses.replace(method_spec("mlp-relu", cpu), width=job.spec.network.width, step_revision=1)
    assert job.spec.network == ref and job.spec.n_experts == job.K


@pytest.mark.slow
def test_damaged_saved_mixture_is_quarantined_and_retrained(tmp_path, monkeypatch):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    cache = ResultCache(tmp_path)
    records = run_figure("moe", "smoke", cache=cache, n_jobs=1, progress=False, methods=["moe-relu"], ns=[500])
    (job,) = records
    first = load_moe(job, cache)
    assert first.n_experts == job.K and first.width == job.spec.network.width
    path = cache.root / "models" / f"{job.key()}.pt"
    path.write_bytes(b"not a checkpoint")
    with pytest.warns(RuntimeWarning, match="damaged"):
        again = trained_moe(job, cache)
    assert path.with_name(path.name + ".corrupt").exists() and path.exists()
    # the same seeds, data and protocol: the same network and record
    for name in again.param_names:
        torch.testing.assert_close(getattr(again, name), getattr(first, name))
    assert cache.load(job)["metrics"]["test_mse"] == pytest.approx(records[job]["metrics"]["test_mse"], rel=1e-6)
    assert cache.load(job)["timing"]["cpu_seconds"] > 0  # the retrained record measures its computation too
    # a file holding another job's mixture is refused too
    other = job.on(n=1_000)
    torch.save({"key": other.key()} | {n: getattr(again, n).detach() for n in again.param_names}, path)
    with pytest.warns(RuntimeWarning, match="another|holds the mixture"), pytest.raises(FileNotFoundError):
        load_moe(job, cache)


def _row(K=10, n=1000, moe=0.1, **dense):
    row = {"K": K, "n": n, "E": K, "m": 5, "activation": "relu", "runs": 1, "moe": moe, "moe_train_mse": 0.01,
           "moe_stop": ["cap"], "router_ari": 0.5, "router_ari_min": 0.5, "experts_used": K, "max_load": 0.2,
           "moe_params": 1000, "moe_flops": 500}
    for a in ("relu", "reglu"):
        for m in ("params", "flops"):
            key = f"{a}_{m}"
            row |= {key: dense.get(key, 1.0), f"{key}_width": 10, f"{key}_n_params": 1, f"{key}_flops": 1}
    return row


def test_findings_follow_the_numbers():
    # matched parameters: the better dense net (ReGLU, 0.2) is twice the MoE's MSE: the MoE wins
    # by 2x; matched FLOPs: the better dense net (ReLU, 0.05) is half of it: the MoE loses by 2x
    rows = [_row(moe=0.1, relu_params=0.3, reglu_params=0.2, relu_flops=0.05, reglu_flops=0.4),
            _row(n=2000, moe=0.1, relu_params=0.05, reglu_params=0.2, relu_flops=0.02, reglu_flops=0.4)]
    text = experts.moe_findings(rows)
    assert max(len(line) for line in text.splitlines()) <= 80
    lines = text.splitlines()
    at_params = lines[lines.index(next(x for x in lines if "matched parameters" in x)):]
    assert "wins at 1, loses at 1 of 2 n" in at_params[0]
    assert "MoE / ReGLU (the better dense) = 0.50: wins, 2.00× lower MSE" in at_params[1]
    assert "MoE / ReLU (the better dense) = 2.00: loses, 2.00× higher MSE" in at_params[2]
    flops = next(x for x in lines if "matched FLOPs" in x)
    assert "the MoE loses at every n" in flops
    assert "at matched parameters: the MoE wins 1, loses 1 of 2" in text and "at matched FLOPs: the MoE wins 0, loses 2 of 2" in text
    assert experts.moe_answer(rows) == ("at matched parameters: the MoE wins 1, loses 1 of 2 (K, n) cells; "
                                        "at matched FLOPs: the MoE wins 0, loses 2 of 2 (K, n) cells")
    # within the tie band a ratio is neither a win nor a loss (one run: no spread measured)
    tie = experts.moe_findings([_row(moe=0.099, relu_params=0.1, reglu_params=0.2, relu_flops=0.1, reglu_flops=0.2)])
    assert "a tie (within 5 %)" in tie and "wins 0, loses 0 of 1" in tie and "ties at 1 of 1 n" in tie
    assert "the MoE wins at every n" in experts.moe_findings([_row(moe=0.01)])
    assert "not every network computed yet" in experts.moe_findings([_row(moe=None)])
    assert "the MoE wins" not in experts.moe_findings([]) and len(experts.moe_frame([_row()])) == 1
    assert experts.moe_frame([]).empty


def test_validation_and_cost_model():
    cpu = get_profile("cpu")
    with pytest.raises(ValueError, match="n_experts"):
        method_spec("moe-relu", cpu)
    with pytest.raises(ValueError, match="moe-tanh"):
        method_spec("moe-tanh", cpu, n_experts=10)
    with pytest.raises(ValueError, match="no moe grid"):
        experts.moe_accounting(dataclasses.replace(cpu, moe=None))
    with pytest.raises(ValueError, match="no moe grid"):
        sweep("moe", dataclasses.replace(cpu, moe=None))
    with pytest.raises(ValueError, match="K="):
        sweep("moe", "cpu", Ks=[3])
    with pytest.raises(ValueError, match="one panel per K"):
        experts.plot_moe([_row(K=10), _row(K=50)], [None])
    parts = page_seconds("10_beyond_experts", "cpu", "cpu-thread")
    # the cpu sweep's networks at the update cap: a few one-thread minutes
    moe_part = parts["mixtures of experts"] + parts["dense nets at matched parameters and FLOPs"]
    assert 60 < moe_part < 15 * 60
