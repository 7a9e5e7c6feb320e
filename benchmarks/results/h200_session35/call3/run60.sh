# Session 35, call 3: small ragged GQA batches on the balanced schedule at 1-6 programs an SM
# against uniform splits (docs/perf.md "Session 35: predictions first").
steps=()
steps+=("300:gqa_small_balanced:python3 run60_gqa_small_balanced.py")
bash tools/device_steps.sh "${steps[@]}"
