#!/usr/bin/env bash
# The declared versions, tested: the unit tests (the quick ones) in a virtual environment of
#   floors  the lowest version pyproject.toml declares of every runtime dependency (a constraints
#           file written from its `name>=version` floors), or
#   newest  the newest releases of every dependency: what a fresh `pip install` picks (Colab's),
# each beside the CPU torch (TORCH_SPEC, default torch==2.13.0, the Makefile's pin: a CPU wheel on
# this project's machines; plain `torch` would pull the multi-GB CUDA build on Linux). The torch
# floor itself is not tested here: no CPU wheel of it is at hand. The test tools (pytest, nbval,
# ...) take their newest releases in both.
#
#   bash scripts/check_versions.sh floors|newest
#
# The environment is kept in .venv-floors/ or .venv-newest/ and reused: floors is rebuilt when
# pyproject.toml changes; newest is upgraded to the newest releases on every call (pip asks the
# index; seconds when nothing is new). Environment: PY (the interpreter that makes the venv,
# default python3), TORCH_SPEC, TORCH_INDEX (an index to take torch from), PYTEST_ARGS (default
# -m "not slow").
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-}
case $which in floors|newest) ;; *) echo "usage: check_versions.sh floors|newest" >&2; exit 2;; esac
PY=${PY:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
VENV=$PWD/.venv-$which
VPY=$VENV/bin/python
STAMP=$VENV/.monosem-installed
t0=$(date +%s)
step() { echo "check_versions $which: [$(( $(date +%s) - t0 )) s] $*"; }

[ -x "$VPY" ] || "$PY" -m venv "$VENV"
# torch held at TORCH_SPEC whatever else pip resolves or upgrades
echo "$TORCH_SPEC" > "$VENV/torch.txt"
index=()
[ -z "${TORCH_INDEX:-}" ] || index=(--extra-index-url "$TORCH_INDEX")
if [ "$which" = floors ]; then
  if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
    # every runtime dependency at its floor: name>=version becomes name==version (torch aside)
    "$VPY" - pyproject.toml > "$VENV/floors.txt" <<'PYTHON'
import re
import sys
import tomllib

with open(sys.argv[1], "rb") as fh:
    dependencies = tomllib.load(fh)["project"]["dependencies"]
for spec in dependencies:
    m = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9][0-9A-Za-z.]*)", spec.replace(" ", ""))
    if m is None:
        sys.exit(f"check_versions: the dependency {spec!r} declares no floor (name>=version)")
    if m.group(1) != "torch":
        print(f"{m.group(1)}=={m.group(2)}")
PYTHON
    "$VPY" -m pip install --quiet "${index[@]}" -c "$VENV/torch.txt" -c "$VENV/floors.txt" "$TORCH_SPEC" -e ".[test]" jupytext
    touch "$STAMP"
    step "installed the floors: $(tr '\n' ' ' < "$VENV/floors.txt")"
  fi
else
  "$VPY" -m pip install --quiet --upgrade --upgrade-strategy eager "${index[@]}" -c "$VENV/torch.txt" "$TORCH_SPEC" -e ".[test]" jupytext
  step "installed the newest releases"
fi
"$VPY" -m pip check >/dev/null
versions=$("$VPY" - <<'PYTHON'
from importlib.metadata import version
print(", ".join(f"{n} {version(n)}" for n in ("torch", "numpy", "scipy", "sympy", "scikit-learn", "matplotlib", "pandas", "tqdm", "filelock")))
PYTHON
)
step "$versions"
# the unit tests; their own environment's monosem (an editable install of this tree)
args=(-m "not slow")
[ -z "${PYTEST_ARGS:-}" ] || read -ra args <<< "$PYTEST_ARGS"
"$VPY" -m pytest -q "${args[@]}" tests
step "passed"
