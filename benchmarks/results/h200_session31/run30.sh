# Session 31, call 3: the GQA cascade's pass plans crossed (docs/perf.md "Session 31").
steps=()
steps+=("300:cascade_plans:python3 run30_cascade.py")
bash tools/device_steps.sh "${steps[@]}"
