# Session 31, call 6: the GQA cascade's phases (docs/perf.md "Next runs (session 31)" item 1).
steps=()
steps+=("110:cascade_phases:python3 run33_phases.py")
bash tools/device_steps.sh "${steps[@]}"
