"""The top of every notebook, generated from pyproject.toml (one source for the URL and release).

Every ``notebooks/NN_name.md`` opens with the same three pieces, written here and nowhere else:

- the *Open in Colab* badge, pointing at the notebook in the repository of ``[project.urls]``;
- a note, only in the notebook file (tagged ``remove-cell``: the rendered book drops it), saying
  that the outputs stored with the file are the regression tests' ``smoke`` outputs;
- the install cell: a no-op when ``monosem`` is importable, else a pip install of the package
  from the same ref as the badge (:data:`REF`), so that notebook and package come from one
  commit line; it raises when the install fails (``%pip`` would not). torch is a loose
  dependency, so Colab's CUDA torch stays. It is the first cell a Colab reader runs, and tagged
  ``remove-cell``: the rendered book, built where monosem is installed, has nothing to show of it.

    python scripts/notebook_header.py            # rewrite the headers (after a version bump)
    python scripts/notebook_header.py --check    # exit 1 naming every notebook that disagrees

``tests/test_metadata.py`` runs the check.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def metadata() -> tuple[str, str]:
    """``(repository URL, version)`` from pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["urls"]["Repository"], project["version"]


#: the git ref both the badge and the install cell name: the notebook a reader opens and the
#: package it installs come from the same branch
REF = "main"


def install_spec(repo: str, version: str) -> str:
    """The pip requirement of the package at :data:`REF` (``version`` is what it must report)."""
    return f"monosem @ git+{repo}@{REF}"


def badge(stem: str, repo: str) -> str:
    slug = repo.removeprefix("https://github.com/")
    return (f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
            f"(https://colab.research.google.com/github/{slug}/blob/{REF}/notebooks/{stem}.ipynb)")


BANNER = """+++ {"tags": ["remove-cell"]}

> **About the outputs stored in this file.** They come from the `smoke` profile, the tiny sizes
> the regression tests run: their numbers mean nothing. Run the notebook (on Colab: *Runtime ›
> Run all*) to compute the page at the profile named in its parameters cell; the rendered book
> shows the `cpu` profile and the recorded long runs.

+++
"""


def install_cell(repo: str, version: str) -> str:
    spec = install_spec(repo, version)
    return f'''```{{code-cell}} ipython3
:tags: [nbval-ignore-output, remove-cell]

# Without monosem (e.g. on Google Colab), install it from the branch this page belongs to; torch
# is left as it is (Colab's CUDA build stays). With monosem importable, this cell does nothing.
try:
    import monosem
except ImportError:
    import subprocess
    import sys

    # check=True: a failed install stops here, not one cell later
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "{spec}"], check=True)
    import monosem
print(f"monosem {{monosem.__version__}}")
```'''


_BADGE = re.compile(r"^\[!\[Open In Colab\]\([^)]*\)\]\([^)]*\)\n(\n\+\+\+ \{\"tags\": \[\"remove-cell\"\]\}\n.*?\n\+\+\+\n)?", re.S | re.M)
_INSTALL = re.compile(r"```\{code-cell\} ipython3\n(:tags: \[nbval-ignore-output(, remove-cell)?\]\n\n)?# (On Google Colab|Without monosem).*?\n```", re.S)


def render(md: Path, repo: str, version: str) -> str:
    """``md``'s text with its badge, banner and install cell as generated here."""
    text = md.read_text()
    if not _BADGE.search(text) or not _INSTALL.search(text):
        raise ValueError(f"{md.name}: no Colab badge or install cell found to rewrite")
    text = _BADGE.sub(lambda _m: badge(md.stem, repo) + "\n\n" + BANNER, text, count=1)
    return _INSTALL.sub(lambda _m: install_cell(repo, version), text, count=1)


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.md"))


def main(argv: list[str]) -> int:
    repo, version = metadata()
    stale = []
    for md in notebooks():
        new = render(md, repo, version)
        if new != md.read_text():
            stale.append(md.name)
            if "--check" not in argv:
                md.write_text(new)
    if "--check" in argv and stale:
        print("notebook headers disagree with pyproject.toml (run python scripts/notebook_header.py):", *stale)
        return 1
    print(("rewrote " + ", ".join(stale)) if stale else "every notebook header agrees with pyproject.toml")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
