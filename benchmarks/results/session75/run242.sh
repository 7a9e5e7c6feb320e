# Session 75 (carry run242.sh; either GPU). After run241 (v0.2.81's default held out): its two
# misses mended (test_head_blocks pins a 32-row tile, the GPU's being 64; the memcheck case's
# short requests hold at least qlen keys).
# 1. The GPU tests of the merge sized by partials, the MLA GPU file (a graph captured once and
#    replayed with the default merge sized by partials: 6 requests on 40 programs) and the
#    balanced-schedule file.
# 2. memcheck of the merge_by_length cases (the default on MLA, opt-in on GQA with sinks).
# On an H200 first issue 5's standing (`issue5_on_h200`).
CALL_LIMIT=${CALL_LIMIT:-420}
source tools/device_call.sh
issue5_on_h200
fits 200 tests && timeout 200 python3 -m pytest tests/test_merge_by_length.py tests/test_mla_gpu.py \
  tests/test_balanced_schedule.py -q -n 8 -p no:cacheprovider > "$L/tests.txt" 2>&1
echo "tests exit $? at ${SECONDS} s"; tail -n 4 "$L/tests.txt"
fits 60 memcheck && memcheck $((CALL_LIMIT - SECONDS - 5)) merge_by_length
pack_logs
