# Next session, call 2 (docs/perf.md "Next runs (session 32)" items 3-4): memcheck at v0.2.34
# and the num_splits == 1 specialisation. Copy this and run44_one_split.py to the root.
steps=()
steps+=("170:memcheck:PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py 2>&1 | tail -15")
steps+=("100:one_split:python3 run44_one_split.py")
bash tools/device_steps.sh "${steps[@]}"
