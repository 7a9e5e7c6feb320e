# Next session, call 1 (docs/perf.md "Next runs (session 32)" items 0-1): the whole GPU suite at
# v0.2.34 and the ragged MLA batches at the default, uniform and balanced schedules. Copy this,
# run46_ragged_schedule.py and ragged_schedule_cases.json to the repository root; carry them.
steps=()
steps+=("215:gpu_suite:python3 -m pytest tests -n 12 -q -p no:cacheprovider --durations 5 2>&1 | tail -15")
steps+=("300:ragged_schedule:python3 run46_ragged_schedule.py")
bash tools/device_steps.sh "${steps[@]}"
