#!/usr/bin/env bash
# The Colab path, minus the GPU: build the wheel, install it (not editable) into a fresh virtual
# environment, copy one notebook alone into an empty folder and run it there at the smoke profile.
# Fails on any error: a failed build or install, a cell that raises, a recorded file missing from
# the wheel, or a page that does not find its recorded results inside the installed package.
#
#   bash scripts/colab_check.sh [NOTEBOOK]      (default: notebooks/05_learned_gates.ipynb)
#
# Environment: PY (the interpreter that builds the wheel, default .venv/bin/python; its Python
# makes the fresh venv too), TORCH_SPEC (default torch==2.13.0, the Makefile's pin), TORCH_INDEX
# (optional index to take torch from), COLAB_CHECK_TMP (where the temporary folder goes), KEEP=1
# (keep the temporary folder, for inspection). About 2 minutes on a 2-core machine, most of it pip.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PY:-$ROOT/.venv/bin/python}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
NOTEBOOK=${1:-notebooks/05_learned_gates.ipynb}
[ -f "$NOTEBOOK" ] || { echo "colab_check: no notebook $NOTEBOOK" >&2; exit 1; }

# the temporary folder: $COLAB_CHECK_TMP, else /dev/shm when it has room (the fresh venv is about
# 1.5 GB in 48 000 files, which a disk mounted with online discard takes minutes to delete), else $TMPDIR
base=${COLAB_CHECK_TMP:-}
if [ -z "$base" ] && [ -w /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 {print $4}')" -gt 4000000 ]; then base=/dev/shm; fi
TMP=$(mktemp -d "${base:-${TMPDIR:-/tmp}}/monosem-colab.XXXXXX")
export TMPDIR=$TMP/tmp  # pip's own temporary files too
mkdir -p "$TMPDIR"
if [ "${KEEP:-0}" = 1 ]; then echo "colab_check: keeping $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi
t0=$(date +%s)
step() { echo "[$(( $(date +%s) - t0 )) s] $*"; }

step "building the wheel"
# from a copy of what the wheel is made of, so that the build leaves nothing in the source tree
mkdir -p "$TMP/src"
tar -C "$ROOT" --exclude=__pycache__ -cf - pyproject.toml README.md LICENSE monosem | tar -C "$TMP/src" -xf -
"$PY" -m pip wheel --quiet --no-deps --no-build-isolation -w "$TMP/dist" "$TMP/src" >"$TMP/wheel.log" 2>&1 \
  || { cat "$TMP/wheel.log" >&2; echo "colab_check: the wheel did not build" >&2; exit 1; }
WHEEL=$(ls "$TMP"/dist/monosem-*.whl)
step "built $(basename "$WHEEL")"

# every recorded result in the source tree must be inside the wheel (package-data)
"$PY" - "$WHEEL" "$TMP/src/monosem/recorded" <<'EOF'
import sys, zipfile
from pathlib import Path
wheel, recorded = sys.argv[1], Path(sys.argv[2])
inside = set(zipfile.ZipFile(wheel).namelist())
want = sorted(f"monosem/recorded/{p.relative_to(recorded).as_posix()}" for p in recorded.rglob("*.json"))
missing = [w for w in want if w not in inside]
if missing:
    sys.exit(f"colab_check: {len(missing)} of {len(want)} recorded files are not in the wheel, e.g. {missing[:3]}")
print(f"  the wheel holds all {len(want)} recorded files")
EOF

step "creating a fresh virtual environment"
"$PY" -m venv "$TMP/venv"
VPY=$TMP/venv/bin/python
# nothing of the source tree or of another environment may leak in
unset PYTHONPATH PYTHONHOME VIRTUAL_ENV MONOSEM_CLAIMS
"$VPY" -m pip install --quiet $([ -n "${TORCH_INDEX:-}" ] && echo --index-url "$TORCH_INDEX") "$TORCH_SPEC"
step "installed $TORCH_SPEC"
"$VPY" -m pip install --quiet "$WHEEL" ipykernel nbconvert nbclient
step "installed the wheel and its dependencies, ipykernel, nbconvert, nbclient"

WORK=$TMP/colab
mkdir -p "$WORK" "$TMP/home"
cp "$NOTEBOOK" "$WORK/"
NAME=$(basename "$NOTEBOOK")
cd "$WORK"
# the package must come from the venv, not the source tree
"$VPY" -c "import monosem, sys; p = monosem.__file__; print('  monosem', monosem.__version__, 'from', p); sys.exit(0 if p.startswith('$TMP/venv') else 'colab_check: monosem imported from outside the fresh venv')"
step "executing $NAME alone in an empty folder (profile smoke)"
# a kernel spec of the fresh venv's own interpreter, whatever the user's Jupyter folders hold
env HOME="$TMP/home" JUPYTER_PATH="$TMP/venv/share/jupyter" MONOSEM_PROFILE=smoke TQDM_DISABLE=1 \
  MONOSEM_CACHE="$WORK/results/cache" MPLBACKEND=Agg \
  "$TMP/venv/bin/jupyter" nbconvert --log-level ERROR --to notebook --execute \
  --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name=python3 \
  --output executed.ipynb "$NAME"
step "executed"

# the page found its recorded results inside the installed package
"$VPY" - "$WORK/executed.ipynb" <<'EOF'
import json, re, sys
nb = json.load(open(sys.argv[1], encoding="utf-8"))
text = []
for cell in nb["cells"]:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            sys.exit(f"colab_check: a cell raised {out.get('ename')}: {out.get('evalue')}")
        t = out.get("text") or out.get("data", {}).get("text/plain", "")
        text.append("".join(t) if isinstance(t, list) else t)
text = "\n".join(text)
found = re.findall(r"recorded: (\d+) of (\d+) cells", text)
if not found:
    sys.exit("colab_check: the page printed no 'recorded: N of M cells' line")
if any(int(n) == 0 for n, _ in found):
    sys.exit(f"colab_check: the page found no recorded cells inside the installed package: {found}")
print("  recorded results found in the installed package: " + ", ".join(f"{n} of {m} cells" for n, m in found))
EOF
step "colab_check passed"
