#!/usr/bin/env bash
# The GPU test run, as one call of the device tool (see docs/gpu.md):
#   bash tools/device_check.sh            # logs go to $OUT (or benchmarks/results/gpu)
# Runs the whole pytest suite on the GPU (bf16 and fp16, GPU-only cases included), then the
# memcheck subset under compute-sanitizer.
set -uo pipefail
out=${OUT:-benchmarks/results/gpu}
mkdir -p "$out"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
} 2>&1 | tee "$out/gpu_env.txt"
# Most of the suite's time is Triton compiling on the CPU: spread it over 8 workers (the H200
# machine has 16 cores; each worker holds its own CUDA context) when pytest-xdist is there.
workers=$(python3 -c "import xdist" 2>/dev/null && echo "-n 8")
python3 -m pytest tests -q -rA --durations=15 -p no:cacheprovider $workers "$@" 2>&1 \
  | tee "$out/pytest_gpu.log"
status=$?
bash tools/memcheck.sh > "$out/memcheck.log" 2>&1
memcheck_status=$?
grep -E "^== |ERROR SUMMARY|^memcheck:" "$out/memcheck.log"
exit $(( status || memcheck_status ))
