steps=()
steps+=("70:ab:python3 run25_ab.py")
steps+=("80:gpu_tests:python3 -m pytest tests/test_gqa_gpu.py tests/test_planner.py -n 12 -q -p no:cacheprovider 2>&1 | tail -5")
steps+=("80:standing5:python3 -m splitkv bench --rep-ms 30 --providers splitkv,triton-peer --special --labels ragged 1x --heads 12 --qlen 1 2 4 --out \$STEP_OUT")
bash tools/device_steps.sh "${steps[@]}"
