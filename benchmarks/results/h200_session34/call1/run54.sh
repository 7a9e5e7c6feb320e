# Next session, call 1: memcheck at v0.2.35, issue 5's MLA standing with the Triton peer and
# the ceiling (qlen 1, 2, 4: the 64-row sums at the end), and the ragged MLA batches at the
# default, uniform and balanced schedules (session 32's run46_ragged_schedule.py and
# ragged_schedule_cases.json, in h200_session32/next/). Copy all three to the repository root;
# carry run54.sh, run46_ragged_schedule.py and .peers.
steps=()
steps+=("160:memcheck:PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py 2>&1 | tail -15")
steps+=("75:mla_standing:python3 -m splitkv bench --rep-ms 30 --providers splitkv,triton-peer --special --labels ragged 1x --heads 12 --qlen 1 2 4 --out \$STEP_OUT --tag h200_mla_standing_v0.2.35")
steps+=("300:ragged_schedule:python3 run46_ragged_schedule.py")
bash tools/device_steps.sh "${steps[@]}"
