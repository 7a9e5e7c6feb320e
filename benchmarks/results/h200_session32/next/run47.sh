# Next session, call 2 (docs/perf.md "Next runs (session 32)" items 2-4): memcheck at v0.2.34,
# the cascades planned with and without the calls' lengths, the num_splits == 1
# specialisation. Copy this, run43_cascade_lengths.py and run44_one_split.py to the root.
steps=()
steps+=("170:memcheck:PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py 2>&1 | tail -15")
steps+=("140:cascade_lengths:python3 run43_cascade_lengths.py")
steps+=("100:one_split:python3 run44_one_split.py")
bash tools/device_steps.sh "${steps[@]}"
