#!/usr/bin/env bash
# The recorded long run (profile "long"), one cell at a time (MONOSEM_MAX_STACK=1) so that an
# interruption loses only the cell in flight. Resumable: finished cells are in the cache and are
# never recomputed; a network in training resumes from its checkpoint.
#
#   nohup nice -n 10 bash scripts/long_run.sh regime  [N ...] > results/long_regime.log 2>&1 &
#   nohup nice -n 10 bash scripts/long_run.sh figures [N ...] > results/long_figures.log 2>&1 &
#   RUNS="1 2" nohup nice -n 10 bash scripts/long_run.sh seeds [N ...] > results/long_seeds.log 2>&1 &
#   KS="50" nohup nice -n 10 bash scripts/long_run.sh ladder networks > results/long_ladder.log 2>&1 &
#   python -m monosem status fig2 --profile long          # how much is done and left (regime, fig4, fig6 alike)
#   python -m monosem record fig2 --profile long          # copy finished cells to monosem/recorded/
#   (done after every (K, n) by this script)
#
# regime:  the regime map (K = 10, 50; n = 10 000 ... 200 000; two network sizes; global RFM up to
#          the profile's cut, 50 000).
# figures: Figures 2, 6 and 4 at the profile's sizes (n = 20 000, 50 000, every K, run 0; GELU
#          and SwiGLU at 20 000), sharing every cell the regime map already computed.
# seeds:   runs 1-4 (RUNS, default "1 2 3 4") of every Figure 2, 6 and 4 cell at K = 1, 2, 5, 10,
#          50 (KS), run by run, each run's sizes ascending; two workers on disjoint RUNS use both cores.
# ladder:  finding 1b's scale ladder (monosem/experiments/questions/ladder/): "oracles" (both
#          per-cluster oracles, five runs at every n of the ladder), "networks" (run 0 of every
#          rung, then runs 1-4 where the ladder declares them; each network's gap cell, its
#          per-cluster scoring, as it lands) or "gaps" (the gap cells of every finished network,
#          the foot's included: they retrain its recorded networks), at K = 50 then 10 (KS).
# N: the training sizes to run (default: all of the phase's, ascending). KS: the cluster counts
# (default: all of the phase's); two workers on disjoint KS use both cores without computing a
# cell twice. What runs is exactly the profile's declared sweep (monosem/profiles.py), cut included.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
export MONOSEM_CACHE=${MONOSEM_CACHE:-$PWD/results/cache}
export MONOSEM_MAX_STACK=1
# one thread: the per-cell times are one-core times, and the other core stays free
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
phase=${1:-}
case "$phase" in
  regime) default_ns="10000 20000 50000 100000 200000"; default_Ks="10 50" ;;
  figures) default_ns="20000 50000"; default_Ks="1 2 10 50" ;;
  seeds) default_ns="20000 50000"; default_Ks="1 2 5 10 50" ;;
  ladder) default_Ks="50 10" ;;
  *) echo "usage: $0 regime|figures|seeds|ladder [N ...]" >&2; exit 2 ;;
esac
shift
# a fresh machine (no cache): start from the cells already recorded in the package
for fig in regime fig2 fig4 fig6 ladder ladder-gap; do $PY -m monosem record $fig --profile long --restore; done
# the ladder's gap cells at K ($1) whose networks are finished; $2 = 1: the foot's too
gaps() {
  $PY - "$1" "$2" <<'PYTHON'
import sys
from monosem.experiments.cache import ResultCache
from monosem.experiments.methods import compute_many, plan
from monosem.experiments.questions.ladder import ready_gap_jobs
from monosem.experiments.runner import run_jobs
from monosem.profiles import get_profile

cache = ResultCache()
jobs = ready_gap_jobs(get_profile("long"), cache, Ks=(int(sys.argv[1]),), foot=sys.argv[2] == "1")
run_jobs(jobs, compute_many, cache, desc="ladder-gap", plan=plan)
PYTHON
  $PY -m monosem record ladder-gap --profile long
}
if [ "$phase" = ladder ]; then
  part=${1:-networks}
  for K in ${KS:-$default_Ks}; do
    if [ "$part" = gaps ]; then
      # the gap cells whose networks are finished (never one another worker is training), the
      # foot's included (they retrain its recorded networks)
      gaps $K 1
      continue
    fi
    if [ "$part" = oracles ]; then
      $PY -m monosem run ladder --profile long --K $K --methods oracle-rfm oracle-laplace
      $PY -m monosem record ladder --profile long
      continue
    fi
    for r in ${RUNS:-0 1 2 3 4}; do
      # one network at a time, each recorded as it lands, then scored cluster by cluster (its
      # gap cell: seconds to minutes)
      while read -r n method; do
        $PY -m monosem run ladder --profile long --K $K --runs $r --n $n --methods $method
        $PY -m monosem record ladder --profile long
        gaps $K 0 || echo "the gap cells at K=$K failed (see above); the networks go on"
      done < <($PY -m monosem status ladder --profile long --K $K --runs $r --methods mlp-reglu mlp-relu --missing 2>/dev/null \
               | sed -n 's/^  missing: \(mlp-[a-z]*\) K=[0-9]* n=\([0-9]*\) run=.*/\2 \1/p' | sort -s -n -k1,1 | uniq)
    done
  done
  exit 0
fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || read -r -a sizes <<< "$default_ns"
if [ "$phase" = seeds ]; then
  for r in ${RUNS:-1 2 3 4}; do
    for n in "${sizes[@]}"; do
      for K in ${KS:-$default_Ks}; do
        # each figure where its grid has this K (Figure 4 has no K = 1, Figures 2 and 6 no K = 5)
        for fig in fig2 fig6 fig4; do
          if $PY -m monosem status $fig --profile long --K $K --n $n --runs $r >/dev/null 2>&1; then
            $PY -m monosem run $fig --profile long --runs $r --K $K --n $n
            $PY -m monosem record $fig --profile long
          fi
        done
      done
    done
  done
  exit 0
fi
for n in "${sizes[@]}"; do
  for K in ${KS:-$default_Ks}; do
    if [ "$phase" = regime ]; then
      # kernels and Bayes first (cheap, and they tell the page what the networks must reach), then
      # the networks (each 20 000 - 200 000 updates)
      $PY -m monosem run regime --profile long --K $K --n $n --methods bayes oracle-laplace oracle-rfm
      $PY -m monosem run regime --profile long --K $K --n $n
    else
      $PY -m monosem run fig2 --profile long --runs 0 --K $K --n $n
      $PY -m monosem run fig6 --profile long --runs 0 --K $K --n $n
      # Figure 4 (K = 2, 10, 50): the MLP-gated predictors on the ReLU network just trained
      if [ "$K" -ne 1 ]; then $PY -m monosem run fig4 --profile long --runs 0 --K $K --n $n; fi
    fi
    # copy what finished into the package (commit monosem/recorded/ as it grows)
    for fig in regime fig2 fig4 fig6; do $PY -m monosem record $fig --profile long; done
  done
done
