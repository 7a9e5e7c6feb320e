steps=()
steps+=("200:ab:python3 run19_ab.py")
B="--kind gqa --special --labels ragged 1x131072 --models llama3-8b gpt-oss llama3-70b-tp8 --qlen 1 2"
steps+=("200:special:python3 -m splitkv bench $B --providers splitkv,triton-peer --out \$STEP_OUT --tag gqa_special_v0.2.27")
steps+=("120:gqa_tests:python3 -m pytest tests/test_gqa_gpu.py tests/test_gqa_decode.py tests/test_balanced_schedule.py tests/test_planner.py -n 12 -q -p no:cacheprovider 2>&1 | tail -8")
bash tools/device_steps.sh "${steps[@]}"
