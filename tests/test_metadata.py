"""One source for the repository URL and the version: pyproject.toml. Every copy must agree."""

import importlib.util
import re
import sys
import tomllib
from pathlib import Path

import pytest

import monosem
from monosem.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
META = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
REPO = META["urls"]["Repository"]
SLUG = REPO.removeprefix("https://github.com/")


def test_urls_in_notebooks_book_and_readme_agree_with_pyproject():
    config = (ROOT / "_config.yml").read_text()
    assert f"url: {REPO}" in config
    for md in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.md")):
        text = md.read_text()
        badge = re.findall(r"colab\.research\.google\.com/github/([^)\s]+)", text)
        assert badge == [f"{SLUG}/blob/main/notebooks/{md.stem}.ipynb"], md.name
        for url in re.findall(r"git\+(https://github\.com/[^\"@\s]+)", text):
            assert url == REPO, md.name
        for url in re.findall(r"\((https://github\.com/[^)\s]+)\)", text):  # links to recorded numbers
            assert url.startswith(REPO + "/tree/main/"), (md.name, url)
    for page in [ROOT / "README.md", *sorted((ROOT / "book").glob("*.md"))]:
        for url in re.findall(r"https://github\.com/[\w.-]+/[\w.-]+", page.read_text()):
            assert url == REPO, page.name


def test_version_and_citation_agree_with_pyproject(capsys):
    assert monosem.__version__ in (META["version"], "0.0.0+local")
    cff = (ROOT / "CITATION.cff").read_text()
    assert f"version: {META['version']}" in cff and f'repository-code: "{REPO}"' in cff
    assert "MIT License" in (ROOT / "LICENSE").read_text() and META["license"] == "MIT"
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"monosem {monosem.__version__}"


def _header_script():
    spec = importlib.util.spec_from_file_location("notebook_header", ROOT / "scripts" / "notebook_header.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_notebook_header_is_generated_from_pyproject():
    header = _header_script()
    assert header.metadata() == (REPO, META["version"])
    for md in header.notebooks():
        assert header.render(md, REPO, META["version"]) == md.read_text(), f"{md.name}: run scripts/notebook_header.py"
        # the note about smoke outputs is in the notebook file, not in the rendered page
        assert '+++ {"tags": ["remove-cell"]}\n\n> **About the outputs stored in this file.**' in md.read_text()


def _run_install_cell(monkeypatch, importable: bool, install_fails: bool = False) -> list[list[str]]:
    """Execute the install cell as IPython would, with the pip subprocess recorded instead of run
    (a successful install makes ``monosem`` importable again; a failing one exits non-zero)."""
    import subprocess

    header = _header_script()
    source = header.install_cell(REPO, META["version"]).split("\n", 3)[3].rsplit("```", 1)[0]
    calls = []
    real = sys.modules["monosem"]

    def run(cmd, check=False, **kwargs):
        calls.append(cmd)
        if install_fails:
            if check:
                raise subprocess.CalledProcessError(1, cmd)
            return subprocess.CompletedProcess(cmd, 1)
        monkeypatch.setitem(sys.modules, "monosem", real)
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(subprocess, "run", run)
    if not importable:
        monkeypatch.setitem(sys.modules, "monosem", None)  # import monosem raises ImportError
    exec(source, {})
    return calls


def test_install_cell_is_a_noop_when_monosem_is_importable(monkeypatch, capsys):
    assert _run_install_cell(monkeypatch, importable=True) == []
    assert f"monosem {monosem.__version__}" in capsys.readouterr().out


def test_install_cell_installs_from_the_badges_ref_otherwise(monkeypatch, capsys):
    header = _header_script()
    calls = _run_install_cell(monkeypatch, importable=False)
    assert len(calls) == 1 and calls[0][-1] == f"monosem @ git+{REPO}@{header.REF}"
    assert f"/blob/{header.REF}/notebooks/" in header.badge("01_x", REPO)
    assert f"monosem {monosem.__version__}" in capsys.readouterr().out


def test_a_failing_install_raises_in_the_install_cell(monkeypatch):
    import subprocess

    with pytest.raises(subprocess.CalledProcessError):
        _run_install_cell(monkeypatch, importable=False, install_fails=True)
