#!/usr/bin/env bash
# The Figure 1 sensitivity study (monosem.experiments.questions.figure1.study): every setting x seed
# is a cell of the result store ($MONOSEM_CACHE, default results/cache), so a rerun resumes.
#   nohup nice -n 10 bash scripts/figure1_study.sh --part 0 2 > results/figure1_study_0.log 2>&1 &
#   nohup nice -n 10 bash scripts/figure1_study.sh --part 1 2 > results/figure1_study_1.log 2>&1 &
# (two workers on disjoint cells), then record the cells: bash scripts/figure1_study.sh --record
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
export MONOSEM_CACHE=${MONOSEM_CACHE:-$PWD/results/cache}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
exec $PY -m monosem study figure1 "$@"
