# Session 75 (carry run241.sh and .peers; either GPU). The held-out check of v0.2.81's default
# `merge_long_partials` (16, short requests 4 rows a program, where the batch has more
# requests than (programs - 1) // 16 long slots; plan_rules.default_long_partials), written
# from run240's 12 heads x qlen 2 / 4. On an H200 first issue 5's standing (`issue5_on_h200`).
# 1. The GPU tests of the merge sized by partials (tests/test_merge_by_length.py, bf16 too).
# 2. The default against `--merge-long-partials 0` (the old merge), two rounds interleaved,
#    ragged and one-long at heads 12 / 16 / 128 x qlen 1 / 4 / 8, `--merge-time`.
# 3. memcheck of the merge_by_length cases alone (tests/gpu_memcheck.py merge_by_length).
# Predictions: docs/perf.md "Session 75: predictions for run241". ~450 s on an H100.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
issue5_on_h200
fits 90 tests && timeout 90 python3 -m pytest tests/test_merge_by_length.py -q -n 8 -p no:cacheprovider \
  > "$L/tests.txt" 2>&1; tail -n 2 "$L/tests.txt"
M="--rep-ms 20 --merge-time --providers splitkv --special --labels ragged 1x --heads 12 16 128 --qlen 1 4 8"
for r in 1 2; do
  fits 100 new_$r && bench new_$r 110 $M
  fits 100 old_$r && bench old_$r 110 $M --merge-long-partials 0
done
fits 60 memcheck && memcheck $((CALL_LIMIT - SECONDS - 5)) merge_by_length
pack_logs
