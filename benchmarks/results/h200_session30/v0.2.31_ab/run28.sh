steps=()
steps+=("150:gqa_tests:python3 -m pytest tests/test_gqa_gpu.py tests/test_gqa_decode.py tests/test_gqa_compiled.py tests/test_planner.py tests/test_shared_prefix_gqa.py tests/test_bench_smoke.py -n 12 -q -p no:cacheprovider 2>&1 | tail -15")
steps+=("150:memcheck:PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py 2>&1 | tail -15")
steps+=("160:ab:python3 run28_ab.py")
bash tools/device_steps.sh "${steps[@]}"
