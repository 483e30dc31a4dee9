#!/usr/bin/env bash
# The prepared device check for a machine with a GPU (about 9 minutes of run time).
#
# Run from the repository root on the GPU machine:
#     bash benchmarks/gpu_session.sh
# It needs python3 with torch (CUDA), numpy, scipy, sympy, scikit-learn, matplotlib, tqdm, pytest
# and nbclient; monosem itself is used from the source tree (PYTHONPATH), not installed. What a
# Colab user runs comes first, so that a cut-short session still brings the essentials back.
# Everything lands in ${OUT:-gpu_out}, at most 10 files:
#   timings.json       every step's wall time and exit status, the test counts, and
#                      colab_paths.py's timings (below): the recorded numbers
#   nvidia-smi.txt     the GPU, and the stack sizes its free memory allows
#   colab_paths.json   the paths a Colab user takes, timed on the GPU: page 03's training (ReLU
#                      stack of 6 and ReGLU at width 2 048, batch 2 048), its specialization table,
#                      a Laplace (EigenPro) and an RFM fit at n = 20 000, page 05's gated predictor
#   colab_paths.err    its messages (empty when it ran cleanly)
#   tests_cuda.log     the unit tests' device paths on the real GPU (MONOSEM_DEVICE=cuda)
#   tests_stand_in.log the CUDA stand-in's tests (its rules, and the same paths under it)
#   train_bench.log    MLP updates/s (hand-derived step, autograd, plain PyTorch loop)
#   kernels_bench.log  exact / CG / EigenPro solve times on the GPU
#   slice.log          one slice of the paper profile: Figure 2 at K = 10, n = 20 000, run 0
#   cache.tgz          that slice's result files (small JSON) and trained networks
set -uo pipefail
OUT=${OUT:-gpu_out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TQDM_DISABLE=1 MONOSEM_CACHE=$OUT/cache
STEPS="$OUT/.steps.tsv"
: > "$STEPS"

# step NAME TIMEOUT COMMAND...: run it, record its wall time and exit status
step() {
  local name=$1 limit=$2; shift 2
  local t0 t1 rc
  t0=$(date +%s%N)
  timeout "$limit" "$@"
  rc=$?
  t1=$(date +%s%N)
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(( (t1 - t0) / 1000000 ))" >> "$STEPS"
}

nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name(0))" >> "$OUT/nvidia-smi.txt" 2>&1
# the stack sizes the free-memory rule picks here (paper and gpu profiles), beside the cost model
MONOSEM_DEVICE=cuda step stack_sizes 30 python3 -c "
from monosem.experiments import methods
from monosem.experiments.sweeps import sweep
for prof in ('paper', 'gpu'):
    for m in ('mlp-relu', 'mlp-reglu'):
        job = sweep('fig2', prof, methods=[m])[0]
        print(prof, m, 'width', job.spec.width, 'stack', methods.max_stack(job))
" >> "$OUT/nvidia-smi.txt" 2>&1

MONOSEM_DEVICE=cuda step colab_paths 180 python3 benchmarks/colab_paths.py --device cuda \
  --out "$OUT/colab_paths.json" > /dev/null 2> "$OUT/colab_paths.err"
MONOSEM_DEVICE=cuda step tests_cuda 150 python3 -m pytest -q -p no:cacheprovider tests/test_specialization.py \
  tests/test_kernels.py tests/test_models.py tests/test_train.py tests/test_step.py tests/test_gating.py \
  tests/test_data.py > "$OUT/tests_cuda.log" 2>&1
step tests_stand_in 60 python3 -m pytest -q -p no:cacheprovider tests/test_fake_cuda.py \
  -k "not two_jobs and not forked_pool" > "$OUT/tests_stand_in.log" 2>&1
step train_bench 60 python3 benchmarks/train.py --device cuda --threads 1 --seconds 2 \
  --sizes 1024x1024 4096x4096 > "$OUT/train_bench.log" 2>&1
step kernels_bench 60 python3 benchmarks/kernels.py --device cuda --sizes 5000 10000 \
  --iterative-sizes 20000 50000 > "$OUT/kernels_bench.log" 2>&1
MONOSEM_DEVICE=cuda step slice 100 python3 -m monosem run fig2 --profile paper --K 10 --runs 0 --n 20000 \
  > "$OUT/slice.log" 2>&1
python3 -m monosem status fig2 --profile paper --K 10 --runs 0 --n 20000 >> "$OUT/slice.log" 2>&1
tar czf "$OUT/cache.tgz" -C "$OUT" cache 2>/dev/null && rm -rf "$OUT/cache"

# the recorded numbers: one JSON with every step's time and status, the tests' summary lines and
# the Colab paths' timings
python3 - "$OUT" <<'EOF'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
steps = {}
for line in (out / ".steps.tsv").read_text().splitlines():
    name, rc, secs = line.split("\t")
    steps[name] = {"exit_status": int(rc), "seconds": round(int(secs) / 1000, 2)}
def summary(name):
    p = out / name
    lines = [l for l in p.read_text().splitlines() if " passed" in l or " failed" in l or " error" in l] if p.exists() else []
    return lines[-1] if lines else None
paths = out / "colab_paths.json"
record = {"steps": steps, "tests_cuda": summary("tests_cuda.log"), "tests_stand_in": summary("tests_stand_in.log"),
          "colab_paths": json.loads(paths.read_text()) if paths.exists() else None}
(out / "timings.json").write_text(json.dumps(record, indent=2) + "\n")
print(json.dumps(record, indent=2))
EOF
rm -f "$STEPS"
