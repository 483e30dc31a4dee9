"""The pages that train networks (03, 04, 05) run at the smoke profile on a CUDA device: the CUDA
stand-in of ``tests/fake_cuda.py``, turned on in the notebook's kernel by ``MONOSEM_FAKE_CUDA=1``
(``tests/fake_cuda_site`` on ``PYTHONPATH``). Each page is executed from a copy in a temporary
folder, with its own result cache; the sources are never touched."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "notebooks" / f"{stem}.ipynb" for stem in ("03_specialization", "04_sample_efficiency", "05_learned_gates")]

#: the first cell every page runs under the stand-in: proof that it is on (a page that silently ran
#: on the CPU would pass for the wrong reason)
_CHECK = """import torch
from monosem.device import get_device
assert torch.cuda.is_available() and get_device().type == "cuda", "the CUDA stand-in is not on"
assert type(torch.zeros(1, device=get_device())).__name__ == "FakeCudaTensor"
"""


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_page_runs_on_cuda_at_smoke(page, tmp_path, monkeypatch):
    for key in ("MONOSEM_DEVICE", "MONOSEM_DTYPE"):
        monkeypatch.delenv(key, raising=False)
    site = str(ROOT / "tests" / "fake_cuda_site")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (site, os.environ.get("PYTHONPATH", "")) if p))
    monkeypatch.setenv("MONOSEM_FAKE_CUDA", "1")
    monkeypatch.setenv("MONOSEM_PROFILE", "smoke")
    monkeypatch.setenv("TQDM_DISABLE", "1")
    monkeypatch.setenv("MONOSEM_CACHE", str(tmp_path / "cache"))
    nb = nbformat.read(page, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(_CHECK))
    client = NotebookClient(nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    try:
        client.execute()
    finally:
        nbformat.write(nb, tmp_path / page.name)  # the executed copy, for a failure's post-mortem
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
