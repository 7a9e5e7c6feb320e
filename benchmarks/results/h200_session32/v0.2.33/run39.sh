# Session 32, call 4: v0.2.33 (the uniform GQA stage 1 not specialised on batch == 1): the whole
# GPU suite, batch-1 GQA beside the Triton peer, the GQA cascade, memcheck.
steps=()
steps+=("215:gpu_suite:python3 -m pytest tests -n 12 -q -p no:cacheprovider --durations 5 2>&1 | tail -15")
steps+=("100:gqa_batch1:python3 -m splitkv bench --kind gqa --models gpt-oss llama3-8b llama3-70b-tp8 --context 131072 262144 --batch 1 --providers splitkv,triton-peer --out \$STEP_OUT --tag h200_gqa_batch1_v0.2.33")
steps+=("90:gqa_prefix:python3 -m splitkv bench --kind gqa --special --labels 8x131072 '48 in 6' --models llama3-8b gpt-oss llama3-70b-tp8 --providers splitkv,splitkv-prefix --out \$STEP_OUT --tag h200_gqa_prefix_v0.2.33")
steps+=("170:memcheck:PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py 2>&1 | tail -15")
bash tools/device_steps.sh "${steps[@]}"
