"""The Figure 1 sensitivity study: settings, cells, the dead-neuron share, a tiny study end to end,
the recorded study found as cells."""

import json
import math
from dataclasses import asdict, replace

import pytest
import torch

from monosem.experiments.cache import ResultCache
from monosem.experiments.questions.figure1 import study as f1s
from monosem.experiments.questions.figure1.base import Reading
from monosem.experiments.questions.figure1.study import (SETTINGS, STUDY_BASE, dead_share, fingerprints, measure, paper_distance, run_study,
                                                         selected_frame, setting, study_frame, study_job)
from monosem.models import MLP, init_parameters
from monosem.train import TrainConfig, TrainData, train

TINY = replace(STUDY_BASE, width=8, n_train=256, n_val=64, n_test=64, batch=32, max_steps_relu=20, max_steps_other=20, eval_every=10)


def test_settings_are_distinct_and_valid():
    assert len(SETTINGS) >= 24
    assert len({study_job(s, 0).key() for s in SETTINGS.values()}) == len(SETTINGS)
    assert SETTINGS["base (balanced, x0.1)"] == STUDY_BASE
    assert STUDY_BASE.setting_fields() == {"hidden_scale": 0.1, "readout_init": "balanced", "readout_lr": 1.0, "value_scale": 1.0,
                                           "steps": 6_000, "horizon": 1.0, "width": 512, "batch": 256, "n_train": 100_000,
                                           "n_val": 4_096, "n_test": 2_048, "eval_every": 250}
    assert all(setting(s.setting_fields(), label) == s for label, s in SETTINGS.items())
    with pytest.raises(ValueError, match="readout_init"):
        setting(STUDY_BASE.setting_fields() | {"readout_init": "huge"})
    with pytest.raises(ValueError, match="init"):
        Reading(init="huge")
    with pytest.raises(ValueError, match="horizon"):
        Reading(horizon=0.5)
    with pytest.raises(ValueError, match="hidden_scale"):
        Reading(hidden_scale=0.0)


def test_every_setting_belongs_to_a_factor():
    from monosem.experiments.questions.figure1.study import FACTORS

    assert {label for labels in FACTORS.values() for label in labels} == set(SETTINGS)


def test_a_cells_key_is_the_whole_setting_and_seed():
    assert study_job(TINY, 0).key() != study_job(TINY, 1).key()
    assert study_job(TINY, 0).key() != study_job(replace(TINY, horizon=2.0), 0).key()
    assert study_job(TINY, 0).key() == study_job(Reading(**asdict(TINY)), 0).key()
    job = study_job(TINY, 1, "smoke")
    assert (job.K, job.n, job.run, job.method) == (10, TINY.n_train, 1, f1s.METHOD)
    assert job.key() == study_job(TINY, 1, "cpu").key()  # the profile is not part of the key
    with pytest.raises(ValueError, match="n_train"):
        f1s.compute_study_cell(job.on(n=TINY.n_train + 1))


def test_the_figure_is_every_setting_at_every_seed_at_every_profile():
    from monosem.experiments.sweeps import sweep

    for profile in ("smoke", "cpu", "paper"):
        jobs = sweep(f1s.METHOD, profile)
        assert [(j.spec, j.run) for j in jobs] == [(s, seed) for s in SETTINGS.values() for seed in f1s.STUDY_SEEDS]
    assert [j.run for j in sweep(f1s.METHOD, "cpu", runs=[1])] == [1] * len(SETTINGS)


def test_standard_init_draws_a_uniform_readout():
    p = init_parameters(40, 512, "relu", 0, init="standard", hidden_scale=0.5)
    bound = 0.5 / math.sqrt(512)
    assert float(p["a"].abs().max()) <= bound and float(p["a"].abs().max()) > 0.9 * bound
    q = init_parameters(40, 512, "relu", 0)
    assert torch.equal(p["W"], q["W"] * 0.5)  # the hidden rows are those of "pytorch", scaled


def test_dead_share_counts_neurons_off_on_every_point():
    net = MLP(2, 3, "relu")
    with torch.no_grad():
        net.W.copy_(torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]]))
        net.b.zero_()
    x = torch.tensor([[1.0, 1.0], [2.0, 0.5]])  # neuron 1 is negative on both points
    assert dead_share(net, x) == pytest.approx(1 / 3)
    assert dead_share(net, x, torch.tensor([1])) == 1.0
    assert math.isnan(dead_share(net, x, torch.tensor([], dtype=torch.long)))


def test_schedule_steps_sets_the_cosine_horizon():
    x = torch.randn(64, 3, dtype=torch.float64)
    data = TrainData(x, x[:, 0], x[:16], x[:16, 0])
    seen = []
    cfg = TrainConfig(max_steps=4, batch=8, lr=0.01, eval_every=2, schedule_steps=40)
    res = train(MLP(3, 4, "relu", dtype=torch.float64), data, cfg, progress=False, callback=seen.append)
    assert res.steps_run == 4  # the run stops at max_steps, before the decay ends
    with pytest.raises(ValueError, match="schedule_steps"):
        TrainConfig(max_steps=4, batch=8, lr=0.01, schedule_steps=0)


def test_tiny_study_end_to_end_and_resume(tmp_path):
    settings = {"tiny": TINY, "tiny x2 horizon": replace(TINY, horizon=2.0)}
    cache = ResultCache(tmp_path)
    out = run_study(settings, seeds=(0,), cache=cache, progress=False)
    assert len(out["cells"]) == 2 and out["settings"] == {k: v.setting_fields() for k, v in settings.items()}
    df = study_frame(out)
    # ReLU six rates (one branch), GELU three (one branch), ReGLU / SwiGLU three (two branches)
    assert len(df) == 2 * (6 + 3 + 3 * 2 + 3 * 2)
    sel = selected_frame(out)
    assert set(sel["branch"]) == {"relu", "gelu", "reglu gate", "reglu value", "swiglu gate", "swiglu value"}
    assert len(sel) == 2 * 6
    fp = fingerprints(out)
    assert set(fp["relu_rate"]) <= {0.004, 0.008, 0.012, 0.016, 0.024, 0.032}
    assert (fp["reglu_stated_over_best"] >= 1).all()
    dist = paper_distance(sel)
    assert dist.loc["tiny", "distance (points)"] > 0 and 0 <= dist.loc["tiny", "cosine cells within 10"] <= 12
    # a second call reads the cache; a damaged cell is recomputed with a warning naming it
    path = cache.path(study_job(TINY, 0))
    path.write_text("{not json")
    with pytest.warns(RuntimeWarning, match=path.name):
        again = run_study(settings, seeds=(0,), cache=cache, progress=False)
    assert [c["rows"] for c in again["cells"]] == [c["rows"] for c in out["cells"]]  # recomputed: the same rows
    assert json.loads(path.read_text())["config"]["data"]["run"] == 0
    skipped = run_study({"other": replace(TINY, max_steps_relu=10, max_steps_other=10)}, seeds=(0,), cache=cache, progress=False, compute=False)
    assert skipped["cells"] == []


@pytest.mark.slow
def test_the_cells_are_measure_and_a_second_run_computes_nothing(tmp_path, monkeypatch):
    """Each (setting, seed) is a cell of the store: its rows are :func:`measure`'s, stored once;
    ``part`` splits the cells between workers and a second run reads them all."""
    settings = {"tiny": TINY, "tiny value x0.1": replace(TINY, value_scale=0.1)}
    cache = ResultCache(tmp_path)
    first = run_study(settings, seeds=(0, 1), cache=cache, progress=False, part=(1, 2))
    assert [(c["label"], c["seed"]) for c in first["cells"]] == [("tiny", 1), ("tiny value x0.1", 1)]  # cells 1 and 3
    run_study(settings, seeds=(0, 1), cache=cache, progress=False, part=(0, 2))

    def boom(*args, **kwargs):
        raise AssertionError("a cached cell was computed again")

    monkeypatch.setattr(f1s, "measure", boom)
    out = run_study(settings, seeds=(0, 1), cache=cache, progress=False)
    assert [(c["label"], c["seed"]) for c in out["cells"]] == [(label, seed) for label in settings for seed in (0, 1)]
    monkeypatch.undo()
    for cell in out["cells"]:
        assert cell["rows"] == measure(settings[cell["label"]], cell["seed"])["rows"]
    assert len(list((tmp_path / f1s.METHOD).glob("*.json"))) == 4


@pytest.mark.slow
def test_the_command_computes_in_parts_records_and_exports_the_cells(tmp_path, monkeypatch, capsys):
    """``monosem study figure1 --part I K`` computes the cells, ``--record`` records them at the
    cpu profile, where :func:`recorded_study` and ``monosem export --recorded`` find them."""
    from monosem.__main__ import main
    from monosem.experiments import recorded

    settings = {"base (balanced, x0.1)": TINY, "horizon x2": replace(TINY, horizon=2.0)}
    monkeypatch.setattr(f1s, "SETTINGS", settings)
    monkeypatch.setattr(recorded, "recorded_cells_dir", lambda profile: tmp_path / f"cells_{profile}")
    monkeypatch.setenv("TQDM_DISABLE", "1")
    cache = ["--cache", str(tmp_path / "cache")]
    assert main(["study", "figure1", "--record", *cache]) == 1  # nothing cached yet
    assert main(["study", "figure1", *cache, "--part", "0", "2"]) == 0
    assert "2 of 4 cells" in capsys.readouterr().out
    assert main(["study", "figure1", *cache, "--part", "1", "2"]) == 0
    assert main(["study", "figure1", "--record", *cache]) == 0
    assert "4 cells recorded" in capsys.readouterr().out
    rec = f1s.recorded_study()
    assert rec is not None and rec["machine"]["cpu_count"] and rec["seconds"] > 0
    assert rec["results"] == run_study(cache=ResultCache(tmp_path / "cache"), compute=False, progress=False)
    assert main(["export", f1s.METHOD, "--recorded", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 4 * (6 + 3 + 3 * 2 + 3 * 2) and {r["setting"] for r in rows} == set(settings)
    assert all(r["profile"] == "cpu" and r["key"] and "active_pct" in r for r in rows)
    import matplotlib

    matplotlib.use("Agg")
    assert main(["plot", f1s.METHOD, *cache, "--out", str(tmp_path / "map.png")]) == 0  # the map, from the cells
    assert (tmp_path / "map.png").stat().st_size > 0


@pytest.mark.slow
def test_the_studys_answers_read_a_tiny_study(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from monosem.experiments.questions.figure1.study import dead_neurons, factor_effects, gate_value_split, plot_map, ranking

    settings = {"base (balanced, x0.1)": TINY, "horizon x2": replace(TINY, horizon=2.0), "value x0.1": replace(TINY, value_scale=0.1)}
    out = run_study(settings, seeds=(0, 1), cache=ResultCache(tmp_path), progress=False)
    sel = selected_frame(out)
    table = ranking(out)
    assert list(table.index) == sorted(table.index, key=lambda s: table.loc[s, "distance (points)"])
    assert table.loc["horizon x2", "stated rate best"].endswith("of 6")
    effects = factor_effects(sel)
    assert set(effects.index) == {"cosine horizon", "value branch scale"}  # the factors with two settings here
    assert (effects.to_numpy() >= 0).all()
    dead = dead_neurons(sel)
    assert ((dead["dead % of width"] >= 0) & (dead["dead % of width"] <= 100)).all()
    split = gate_value_split(sel)
    assert list(split.index) == ["the paper", "base (balanced, x0.1)", "value x0.1"]
    assert split.loc["value x0.1", "gap A ≥ .71"] == pytest.approx(split.loc["value x0.1", "gate A ≥ .71 %"] - split.loc["value x0.1", "value A ≥ .71 %"])
    from monosem.experiments.questions.figure1.study import study_numbers

    text = study_numbers(out)
    assert set(text) == {"dead_text", "value_text", "fingerprint_text", "answer_text"}
    assert "value x0.1" in text["value_text"] and "3 settings, 2 seeds each" in text["answer_text"]
    fig = plot_map(sel)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 6


def test_every_recorded_cell_is_still_found_and_unchanged():
    """Every recorded cell of the study (the study recorded as one named file before its cells,
    rewritten as its cells) is found as the cell of a (setting, seed) of the study, and the
    recorded study holds each once, with the cells' summed wall time."""
    import json

    from monosem.experiments.recorded import load_recorded_cells, recorded_cells_dir

    files = {p.stem: json.loads(p.read_text()) for p in (recorded_cells_dir(f1s.RECORDED_PROFILE) / f1s.METHOD).glob("*.json")}
    found = load_recorded_cells(f1s.study_jobs(), f1s.RECORDED_PROFILE)
    assert len(found) == len(files) >= 48
    for job, rec in found.items():
        assert files[job.key()] == rec
    rec = f1s.recorded_study()
    assert len(rec["results"]["cells"]) == len(found)
    assert rec["seconds"] == pytest.approx(sum(r["timing"]["seconds"] for r in found.values()))


def test_the_study_readings_are_the_recorded_studys_best():
    """STUDY_READINGS (what the paper profile is run for) names what the recorded study ranks best:
    the most cosine cells within 10 points, and the smallest mean distance."""
    from monosem.experiments.questions.figure1.base import STUDY_READINGS
    from monosem.experiments.questions.figure1.study import ranking

    rec = f1s.recorded_study()
    assert rec is not None and len(rec["results"]["cells"]) >= 48
    ranked = ranking(rec["results"])
    dist = paper_distance(selected_frame(rec["results"]))
    assert [r.name for r in STUDY_READINGS] == [ranked.index[0], dist["distance (points)"].idxmin()]
    for reading in STUDY_READINGS:  # the reading is the setting: same init, scale, rates
        s = SETTINGS[reading.name]
        assert (reading.init, reading.hidden_scale, reading.readout_lr_scale(s.width), reading.value_scale) == (
            s.init, s.hidden_scale, s.readout_lr_scale(), s.value_scale)
