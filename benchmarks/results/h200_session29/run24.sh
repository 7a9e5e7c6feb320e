steps=()
steps+=("200:ab:python3 run24_ab.py")
steps+=("200:gpu_tests:python3 -m pytest tests/test_balanced_schedule.py tests/test_gqa_gpu.py tests/test_planner.py -n 12 -q -p no:cacheprovider 2>&1 | tail -8")
bash tools/device_steps.sh "${steps[@]}"
