#!/usr/bin/env bash
# The recorded long run (profile "long"): the regime map, then the rest of Figures 2, 4 and 6,
# one training size at a time, cheapest first, one cell at a time (MONOSEM_MAX_STACK=1), so that
# an interruption loses only the cell in flight. Resumable: finished cells are in the cache and
# are never recomputed; a network in training resumes from its checkpoint.
#
#   nohup nice -n 10 bash scripts/long_run.sh [N ...] > results/long_run.log 2>&1 &
#   python -m monosem status regime --profile long        # how much is done
#   python -m monosem record regime --profile long        # copy finished cells to monosem/recorded/
#   (done after every (K, n) by this script; the same for fig2, fig4, fig6)
#
# N: the training sizes to run (default: all of the regime map's, ascending). KS: the cluster
# counts (default "10 50"); two workers on disjoint KS use both cores without computing a cell twice.
# EXTRAS=0 runs the regime map's cells only (not the Figure 2 / 4 extras at 20 000 <= n <= 100 000).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
export MONOSEM_CACHE=${MONOSEM_CACHE:-$PWD/results/cache}
export MONOSEM_MAX_STACK=1
# one thread: the per-cell times are one-core times, and the other core stays free
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
# a fresh machine (no cache): start from the cells already recorded in the package
for fig in regime fig2 fig4 fig6; do $PY -m monosem record $fig --profile long --restore; done
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 20000 50000 100000 200000)
for n in "${sizes[@]}"; do
  for K in ${KS:-10 50}; do
    # kernels and Bayes first, then the networks (each 20 000 - 200 000 updates). Global RFM
    # costs ~n^2: 29 min at n = 50 000 on one thread (measured), so hours above; it runs up to
    # GLOBAL_MAX_N (default 100 000) only
    global_kernels=rfm
    [ "$n" -le "${GLOBAL_MAX_N:-100000}" ] || global_kernels=
    $PY -m monosem run regime --profile long --K $K --n $n --methods bayes oracle-laplace oracle-rfm $global_kernels
    $PY -m monosem run regime --profile long --K $K --n $n --methods mlp-relu mlp-reglu
    # Figures 2 and 4 at n >= 20 000: global Laplace, and the MLP-gated local predictors on the
    # width-1 024 ReLU networks just trained (run 0)
    if [ "${EXTRAS:-1}" = 1 ] && [ "$n" -ge 20000 ] && [ "$n" -le 100000 ]; then
      [ -z "$global_kernels" ] || $PY -m monosem run fig2 --profile long --K $K --n $n --runs 0 --methods laplace
      $PY -m monosem run fig4 --profile long --K $K --n $n --runs 0 --methods gated-laplace gated-rfm
    fi
    # copy what finished into the package (commit monosem/recorded/ as it grows)
    for fig in regime fig2 fig4; do $PY -m monosem record $fig --profile long; done
  done
done
