"""Structure of the notebooks: pairing, Colab badge and install cell, the parameters cell."""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.md"))


def test_there_are_notebooks():
    assert SOURCES


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_md_and_ipynb_are_paired_and_in_sync(md):
    ipynb = md.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} missing: run `make sync`"
    text = jupytext.read(md)
    paired = nbformat.read(ipynb, as_version=4)
    assert [c.source for c in text.cells] == [c.source for c in paired.cells], f"{md.name} and {ipynb.name} differ: run `make sync`"
    assert text.metadata["jupytext"]["formats"] == "ipynb,md:myst"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_sync_leaves_the_source_as_committed(md):
    """``make book`` and ``make test`` sync every pair: under any jupytext release (pyproject's
    ``[tool.jupytext]`` filter keeps the release out of the header) the source comes back byte
    for byte, so a build leaves the checkout clean."""
    config = jupytext.config.load_jupytext_configuration_file(str(ROOT / "pyproject.toml"))
    nb = jupytext.read(md)
    assert "jupytext_version" not in md.read_text()
    assert jupytext.writes(nb, fmt="md:myst", config=config) == md.read_text(), f"{md.name}: run `make sync`"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_reference_outputs_were_executed(md):
    nb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "reference outputs missing: run `make reference`"
    assert not any(o.output_type == "error" for c in code for o in c.outputs)


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_colab_badge_install_cell_and_parameters(md):
    nb = jupytext.read(md)
    first_md = next(c for c in nb.cells if c.cell_type == "markdown")
    m = re.search(r"colab\.research\.google\.com/github/[^/]+/[^/]+/blob/[^/]+/(notebooks/[^)\s]+\.ipynb)", first_md.source)
    assert m, f"{md.name}: no Open-in-Colab badge in the first cell"
    assert (ROOT / m.group(1)).exists() and m.group(1) == f"notebooks/{md.stem}.ipynb"
    code = [c for c in nb.cells if c.cell_type == "code"]
    # the install cell (scripts/notebook_header.py): a no-op when monosem imports, else pip install
    assert "import monosem" in code[0].source and '"pip", "install"' in code[0].source and "check=True" in code[0].source
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, f"{md.name}: exactly one cell tagged 'parameters'"
    assert re.search(r"^profile = ", params[0].source, flags=re.M)
    assert "import monosem" in nb_text(nb) or "from monosem" in nb_text(nb)


def nb_text(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


#: the pages whose `gpu` profile trains networks at the paper's or the long profile's widths
GPU_PAGES = ("01_feature_learning", "03_specialization", "04_sample_efficiency", "05_learned_gates", "09_beyond",
             "10_beyond_experts")


@pytest.mark.parametrize("name", GPU_PAGES)
def test_pages_that_need_a_gpu_ask_colab_for_one(name):
    nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    assert nb.metadata.get("accelerator") == "GPU" and nb.metadata.get("colab", {}).get("gpuType") == "T4"


def test_pages_start_slowest_first_by_the_previous_builds_timings(tmp_path):
    """``make execute``'s order: pages the previous build at this profile did not time first, then
    its timed pages, slowest first; book order without timings."""
    import subprocess

    script = Path(__file__).resolve().parents[1] / "scripts" / "page_order.sh"
    timings = tmp_path / "timings.tsv"
    timings.write_text("01_a\tcpu\t52\t0\t1\t1\n04_d\tcpu\t672\t0\t1\t1\n03_c\tcpu\t160\t0\t1\t1\n01_a\tsmoke\t900\t0\t1\t1\n")

    def order(profile: str, path: Path) -> list[str]:
        out = subprocess.run(["bash", str(script), profile, str(path), "01_a", "02_b", "03_c", "04_d"], capture_output=True,
                             text=True, check=True)
        return out.stdout.split()

    assert order("cpu", timings) == ["02_b", "04_d", "03_c", "01_a"]
    assert order("smoke", timings) == ["02_b", "03_c", "04_d", "01_a"]
    assert order("cpu", tmp_path / "none.tsv") == ["01_a", "02_b", "03_c", "04_d"]
