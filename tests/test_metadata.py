"""One source for the repository URL and the version: pyproject.toml. Every copy must agree."""

import re
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
