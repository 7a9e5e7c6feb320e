#!/usr/bin/env bash
# The GPU suite's memcheck subset (tests/gpu_memcheck.py) under compute-sanitizer: exit 9 on any
# error; `merge_by_length` as the argument runs only that kernel's cases. torch's caching
# allocator hides out-of-bounds accesses from memcheck, so it is off.
# Callers set PYTHONPATH to the checkout's src/ (tools/device_check.sh, tools/device_call.sh).
PYTORCH_NO_CUDA_MEMORY_CACHING=1 exec compute-sanitizer --tool memcheck --error-exitcode 9 \
  python3 "$(dirname "$0")/../tests/gpu_memcheck.py" "$@"
