# Session 31, call 4: v0.2.32 (the GQA cascade's stacked pass on its chunks' lengths): the
# cascade's bench beside v0.2.31's run, its GPU tests, and memcheck.
steps=()
steps+=("120:gqa_prefix:python3 -m splitkv bench --kind gqa --special --labels 8x131072 '48 in 6' --models llama3-8b gpt-oss llama3-70b-tp8 --providers splitkv,splitkv-prefix --out \$STEP_OUT --tag h200_gqa_prefix_v0.2.32")
steps+=("150:gqa_tests:python3 -m pytest tests/test_shared_prefix_gqa.py tests/test_shared_prefix.py tests/test_planner.py tests/test_bench_smoke.py -n 12 -q -p no:cacheprovider 2>&1 | tail -8")
steps+=("250:memcheck:PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py 2>&1 | tail -15")
bash tools/device_steps.sh "${steps[@]}"
