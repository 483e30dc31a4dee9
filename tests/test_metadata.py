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
    assert "MIT License" in (ROOT / "LICENSE").read_text() and META["license"]["text"] == "MIT"
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


def _run_install_cell(monkeypatch, importable: bool) -> list[tuple[str, str]]:
    """Execute the install cell as IPython would, with ``%pip`` recorded instead of run."""
    from IPython.core.inputtransformer2 import TransformerManager

    header = _header_script()
    source = header.install_cell(REPO, META["version"]).split("\n", 3)[3].rsplit("```", 1)[0]
    calls = []

    class Shell:
        def run_line_magic(self, name, line, _stack_depth=1):
            calls.append((name, line))

    if not importable:
        monkeypatch.setitem(sys.modules, "monosem", None)  # import monosem raises ImportError
    exec(TransformerManager().transform_cell(source), {"get_ipython": Shell})
    return calls


def test_install_cell_is_a_noop_when_monosem_is_importable(monkeypatch, capsys):
    assert _run_install_cell(monkeypatch, importable=True) == []
    assert "nothing to do" in capsys.readouterr().out


def test_install_cell_installs_the_matching_release_otherwise(monkeypatch, capsys):
    calls = _run_install_cell(monkeypatch, importable=False)
    assert calls == [("pip", f'install -q "monosem @ git+{REPO}@v{META["version"]}"')]
    assert f"@v{META['version']}" in capsys.readouterr().out
