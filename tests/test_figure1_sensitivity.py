"""The Figure 1 sensitivity study: settings, keys, the dead-neuron share, a tiny study end to end."""

import json
import math
from dataclasses import asdict, replace

import pytest
import torch

from monosem.experiments.questions.figure1_sensitivity import (SETTINGS, Setting, dead_share, fingerprints, paper_distance, run_study,
                                                      selected_frame, study_frame)
from monosem.models import MLP, init_parameters
from monosem.train import TrainConfig, TrainData, train

TINY = Setting(width=8, n_train=256, n_val=64, n_test=64, batch=32, steps=20, eval_every=10)


def test_settings_are_distinct_and_valid():
    assert len(SETTINGS) >= 24
    assert len({s.key(0) for s in SETTINGS.values()}) == len(SETTINGS)
    assert SETTINGS["base (balanced, x0.1)"] == Setting()
    with pytest.raises(ValueError, match="readout_init"):
        Setting(readout_init="huge")
    with pytest.raises(ValueError, match="horizon"):
        Setting(horizon=0.5)
    with pytest.raises(ValueError, match="hidden_scale"):
        Setting(hidden_scale=0.0)


def test_every_setting_belongs_to_a_factor():
    from monosem.experiments.questions.figure1_sensitivity import FACTORS

    assert {label for labels in FACTORS.values() for label in labels} == set(SETTINGS)


def test_key_is_the_whole_setting_and_seed():
    assert TINY.key(0) != TINY.key(1)
    assert TINY.key(0) != replace(TINY, horizon=2.0).key(0)
    assert TINY.key(0) == Setting(**asdict(TINY)).key(0)


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
    out = run_study(settings, seeds=(0,), cache_dir=tmp_path, progress=False)
    assert len(out["cells"]) == 2
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
    files = sorted((tmp_path / "figure1_sensitivity").glob("*.json"))
    files[0].write_text("{not json")
    with pytest.warns(RuntimeWarning, match=files[0].name):
        again = run_study(settings, seeds=(0,), cache_dir=tmp_path, progress=False)
    assert len(again["cells"]) == 2
    assert json.loads(files[0].read_text())["seed"] == 0
    skipped = run_study({"other": replace(TINY, steps=10)}, seeds=(0,), cache_dir=tmp_path, progress=False, compute=False)
    assert skipped["cells"] == []


def test_the_studys_answers_read_a_tiny_study(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from monosem.experiments.questions.figure1_sensitivity import dead_neurons, factor_effects, gate_value_split, plot_map, ranking

    settings = {"base (balanced, x0.1)": TINY, "horizon x2": replace(TINY, horizon=2.0), "value x0.1": replace(TINY, value_scale=0.1)}
    out = run_study(settings, seeds=(0, 1), cache_dir=tmp_path, progress=False)
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
    from monosem.experiments.questions.figure1_sensitivity import study_numbers

    text = study_numbers(out)
    assert set(text) == {"dead_text", "value_text", "fingerprint_text", "answer_text"}
    assert "value x0.1" in text["value_text"] and "3 settings, two seeds each" in text["answer_text"]
    fig = plot_map(sel)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 6


def test_the_study_readings_are_the_recorded_studys_best():
    """STUDY_READINGS (what the paper profile is run for) names what the recorded study ranks best:
    the most cosine cells within 10 points, and the smallest mean distance."""
    from monosem.experiments.questions.figure1_sensitivity import RECORDED_NAME, paper_distance, ranking
    from monosem.experiments.recorded import load_recorded
    from monosem.experiments.questions.specialization import STUDY_READINGS

    rec = load_recorded(RECORDED_NAME)
    assert rec is not None and len(rec["results"]["cells"]) >= 48
    ranked = ranking(rec["results"])
    dist = paper_distance(selected_frame(rec["results"]))
    assert [r.name for r in STUDY_READINGS] == [ranked.index[0], dist["distance (points)"].idxmin()]
    for reading in STUDY_READINGS:  # the reading is the setting: same init, scale, rates
        s = SETTINGS[reading.name]
        assert (reading.init, reading.hidden_scale, reading.readout_lr_scale(s.width), reading.value_scale) == (
            "balanced" if s.readout_init == "balanced" else reading.init, s.hidden_scale, s.readout_lr, s.value_scale)
