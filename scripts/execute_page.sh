#!/usr/bin/env bash
# Execute one page of the book: notebooks/NAME.ipynb at $PROFILE, with papermill, into
# $EXECUTED/NAME.ipynb (never in place: the injected-parameters cell would leak into the paired
# source). `make execute` runs the pages through this script in lanes side by side
# (xargs -P); on a failure it exits 255, which stops xargs from starting another page.
#
#   PROFILE=cpu EXECUTED=book/executed MONOSEM_TIMINGS=book/executed/timings.tsv \
#     bash scripts/execute_page.sh 04_sample_efficiency
#
# Appends to $MONOSEM_TIMINGS: page, profile, seconds, start and end (Unix seconds), torch threads.
set -uo pipefail
name=$1
BIN=${BIN:-.venv/bin}
EXECUTED=${EXECUTED:-book/executed}
PROFILE=${PROFILE:-cpu}
threads=${OMP_NUM_THREADS:-}
t0=$(date +%s)
echo "  start  $name (profile=$PROFILE${threads:+, $threads thread(s)})"
if ! TQDM_DISABLE=1 "$BIN/papermill" --no-progress-bar --log-level ERROR --cwd notebooks \
    "notebooks/$name.ipynb" "$EXECUTED/$name.ipynb" -p profile "$PROFILE" 2> "$EXECUTED/$name.log"; then
  echo "FAILED $name (see $EXECUTED/$name.ipynb)"
  tail -n 30 "$EXECUTED/$name.log"
  exit 255
fi
# papermill's injected cell (the profile this build ran at, which the intro and every page's
# announcement already state) is hidden like the parameters cell it overrides
"$BIN/python" - "$EXECUTED/$name.ipynb" <<'PYTHON' || exit 255
import sys

import nbformat

nb = nbformat.read(sys.argv[1], as_version=4)
for cell in nb.cells:
    tags = cell.metadata.setdefault("tags", [])
    if "injected-parameters" in tags and "remove-cell" not in tags:
        tags.append("remove-cell")
nbformat.write(nb, sys.argv[1])
PYTHON
t1=$(date +%s)
echo "  done   $name in $((t1 - t0)) s"
# one short line per page: appends from two lanes do not interleave
printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$PROFILE" "$((t1 - t0))" "$t0" "$t1" "${threads:-default}" >> "$MONOSEM_TIMINGS"
