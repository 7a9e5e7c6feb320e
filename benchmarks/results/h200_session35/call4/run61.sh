# Session 35, call 4: the balanced GQA grid's floor (docs/perf.md "Session 35: predictions").
steps=()
steps+=("300:gqa_grid_floor:python3 run61_gqa_grid_floor.py")
bash tools/device_steps.sh "${steps[@]}"
