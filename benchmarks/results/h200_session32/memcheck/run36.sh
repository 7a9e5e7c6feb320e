# Session 32, call 2: memcheck at v0.2.32 (the shared-prefix helper's first run under the sanitizer).
steps=()
steps+=("280:memcheck:PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py 2>&1 | tail -15")
bash tools/device_steps.sh "${steps[@]}"
