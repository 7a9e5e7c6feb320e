steps=()
steps+=("120:ab:python3 run25_ab.py")
steps+=("150:gpu_tests:python3 -m pytest tests/test_gqa_gpu.py tests/test_planner.py -n 12 -q -p no:cacheprovider 2>&1 | tail -5")
bash tools/device_steps.sh "${steps[@]}"
