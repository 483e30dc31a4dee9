"""Recorded results: the round trip through JSON."""

from __future__ import annotations

import json
import numpy as np
import pytest


def test_recorded_results_round_trip(tmp_path):


    from monosem.experiments.recorded import load_recorded, recorded_path, save_recorded

    results = {"C": np.float64(0.93), "counts": np.array([1, 2, 3]), (3, 4.0): {"ok": np.bool_(True)}, "n": np.int64(5)}
    path = save_recorded("demo_page", "paper", results, 12.5, path=tmp_path / "demo_page.json")
    payload = json.loads(path.read_text())
    assert payload["profile"] == "paper" and payload["seconds"] == 12.5
    assert payload["results"] == {"C": 0.93, "counts": [1, 2, 3], "(3, 4.0)": {"ok": True}, "n": 5}
    assert {"cpu_count", "torch_threads", "accelerator", "git_commit"} <= set(payload["machine"])
    assert not list(tmp_path.glob(".*.tmp"))
    assert recorded_path("demo_page").name == "demo_page.json"
    assert load_recorded("no_such_page_recorded") is None
    with pytest.raises(ValueError, match="name"):
        recorded_path("../escape")
    with pytest.raises(ValueError, match="seconds"):
        save_recorded("demo_page", "paper", {}, -1.0, path=tmp_path / "x.json")
