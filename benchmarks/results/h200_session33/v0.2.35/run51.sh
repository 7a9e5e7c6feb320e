# Session 33, call 3 (v0.2.35: the 64-row column-splitting consumer adds its row sums at the
# end; SHARED_P off by default): the whole GPU suite, memcheck, and the 64-row consumer's P
# through shared memory / with a lazy maximum (run52_shared_p.py).
steps=()
steps+=("260:gpu_suite:python3 -m pytest tests -n 12 -q -p no:cacheprovider --durations 5 > \$STEP_OUT/pytest.log 2>&1; tail -15 \$STEP_OUT/pytest.log")
steps+=("160:memcheck:PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py 2>&1 | tail -15")
steps+=("150:shared_p:python3 run52_shared_p.py")
bash tools/device_steps.sh "${steps[@]}"
