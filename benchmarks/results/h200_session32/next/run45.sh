# Next session, call 1 (docs/perf.md "Next runs (session 32)" items 0-2): the whole GPU suite at
# v0.2.34, the cascades planned with and without the calls' lengths, and the ragged MLA batches
# whose schedule the model fix changes. Copy this, run43_cascade_lengths.py,
# run46_ragged_schedule.py and ragged_schedule_cases.json to the repository root and carry them.
steps=()
steps+=("215:gpu_suite:python3 -m pytest tests -n 12 -q -p no:cacheprovider --durations 5 2>&1 | tail -15")
steps+=("140:cascade_lengths:python3 run43_cascade_lengths.py")
steps+=("180:ragged_schedule:python3 run46_ragged_schedule.py")
bash tools/device_steps.sh "${steps[@]}"
