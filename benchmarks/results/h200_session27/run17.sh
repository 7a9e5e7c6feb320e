steps=()
steps+=("180:gqa_knobs:QLENS=1 python3 run17_gqa.py")
steps+=("50:ncu_gqa_ragged:bash tools/ncu_kernel.sh gqa_ragged_l8b gqa_balanced --kind gqa --model llama3-8b --seq-lens 1 63 64 65 4096 4097 32768 131072")
steps+=("300:gpu_suite:python3 -m pytest tests -n 12 -q -p no:cacheprovider --durations 15 2>&1 | tail -40")
bash tools/device_steps.sh "${steps[@]}"
