#!/usr/bin/env bash
# The prepared device check for a machine with a GPU (about 9 minutes of run time).
#
# Run from the repository root on the GPU machine, e.g. through the device tool:
#     bash benchmarks/gpu_session.sh
# It needs python3 with torch (CUDA), numpy, scipy, sympy, scikit-learn, matplotlib, tqdm and
# pytest; monosem itself is used from the source tree (PYTHONPATH), not installed. Everything it
# measures lands in ${OUT:-gpu_out} as at most 8 files:
#   nvidia-smi.txt     the GPU, and the stack sizes its free memory allows
#   tests_cuda.log     the CUDA code paths under the unit tests (kernels, models, training, gating)
#   train_bench.log    MLP updates/s (hand-derived step, autograd, plain PyTorch loop) up to the
#                      paper's width 4 096 / batch 4 096
#   kernels_bench.log  exact / CG / EigenPro solve times up to n = 50 000 on the GPU
#   slice.log          one slice of the paper profile: Figure 2 at K = 10, n = 20 000, run 0, every
#                      method, with its wall times (feeds the page's paper-profile estimate)
#   cache.tgz          that slice's result files (small JSON) and trained networks
set -uo pipefail
OUT=${OUT:-gpu_out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TQDM_DISABLE=1 MONOSEM_DEVICE=cuda MONOSEM_CACHE=$OUT/cache
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name(0))" >> "$OUT/nvidia-smi.txt" 2>&1
# the stack sizes the free-memory rule picks here (paper and gpu profiles), beside the cost model
timeout 30 python3 -c "
from monosem.experiments import methods
from monosem.experiments.sweeps import sweep
for prof in ('paper', 'gpu'):
    for m in ('mlp-relu', 'mlp-reglu'):
        job = sweep('fig2', prof, methods=[m])[0]
        print(prof, m, 'width', job.param_dict['width'], 'stack', methods.max_stack(job))
" >> "$OUT/nvidia-smi.txt" 2>&1

timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_kernels.py tests/test_models.py \
  tests/test_train.py tests/test_step.py tests/test_gating.py tests/test_data.py > "$OUT/tests_cuda.log" 2>&1
timeout 90 python3 benchmarks/train.py --device cuda --threads 1 --seconds 2 \
  --sizes 1024x1024 4096x4096 > "$OUT/train_bench.log" 2>&1
timeout 120 python3 benchmarks/kernels.py --device cuda --sizes 5000 10000 20000 \
  --iterative-sizes 20000 50000 > "$OUT/kernels_bench.log" 2>&1
( time timeout 150 python3 -m monosem run fig2 --profile paper --K 10 --runs 0 --n 20000 ) \
  > "$OUT/slice.log" 2>&1
python3 -m monosem status fig2 --profile paper --K 10 --runs 0 --n 20000 >> "$OUT/slice.log" 2>&1
tar czf "$OUT/cache.tgz" -C "$OUT" cache 2>/dev/null && rm -rf "$OUT/cache"
tail -n 3 "$OUT"/*.log
