"""environment.yml (conda) and pyproject.toml must list the same packages."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# conda-forge names that differ from PyPI's
CONDA_TO_PIP = {"pytorch": "torch"}


def _name(spec: str) -> str:
    return re.split(r"[<>=!~\[ ;]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _environment_packages() -> set[str]:
    names = set()
    text = (ROOT / "environment.yml").read_text()
    for line in text[text.index("dependencies:"):].splitlines()[1:]:
        m = re.match(r"^\s*-\s+(?!-e\b)([A-Za-z0-9_.\-]+.*)$", line)
        if not m or line.strip().endswith(":"):
            continue
        name = _name(m.group(1))
        if name in {"python", "pip"}:
            continue
        names.add(CONDA_TO_PIP.get(name, name))
    return names


def _pyproject_packages() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in ("book", "test", "peers"):  # the extras `make venv` installs
        specs += project["optional-dependencies"][extra]
    return {_name(s) for s in specs}


def test_environment_matches_pyproject():
    env, py = _environment_packages(), _pyproject_packages()
    assert env == py, f"only in environment.yml: {sorted(env - py)}; only in pyproject.toml: {sorted(py - env)}"
