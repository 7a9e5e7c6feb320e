# Next session, call 1 (docs/perf.md "Next runs (session 30)" item 0): memcheck at v0.2.31 with
# room to finish, then the whole GPU suite.
steps=()
steps+=("250:memcheck:PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py 2>&1 | tail -15")
steps+=("300:gpu_suite:python3 -m pytest tests -n 12 -q -p no:cacheprovider --durations 10 2>&1 | tail -30")
bash tools/device_steps.sh "${steps[@]}"
