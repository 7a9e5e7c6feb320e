# Next session, call 1 (docs/perf.md "Next runs (session 31)" items 0-1): the whole GPU suite
# and memcheck at v0.2.32, then the GQA cascade's phases.
steps=()
steps+=("230:gpu_suite:python3 -m pytest tests -n 12 -q -p no:cacheprovider --durations 10 2>&1 | tail -30")
steps+=("90:cascade_phases:python3 run33_phases.py")
steps+=("270:memcheck:PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py 2>&1 | tail -15")
bash tools/device_steps.sh "${steps[@]}"
