# Session 76 (carry run246.sh; either GPU; ~380 s). run245's whole memcheck subset printed
# nothing in 470 s (one process compiling cold under the sanitizer). tools/memcheck.sh now runs
# each part of tests/gpu_memcheck.py as its own sanitizer process, all at once, and the parts
# print their end.
# 1. The whole memcheck subset (12 parts in parallel), with session 75's `corrupted()`.
# 2. If it fits: the merge sized by partials on half the launches: 4 column slices of 128 on
#    2 warps (`ds4w2`: same registers a thread, 168 against 167, `tools/inspect_merge.py
#    --block-d 128 --warps 2 --heads 12 --qlen 4 --rows 4 --long-partials 16`) against the
#    default (8 slices of 64 on 1 warp), 12 heads one-long qlen 2 / 4 / 8, two rounds.
# Predictions: docs/perf.md "Session 76: predictions for run246".
CALL_LIMIT=${CALL_LIMIT:-380}
source tools/device_call.sh
issue5_on_h200
fits 250 memcheck && memcheck 250
grep -E " s: | done|ERROR SUMMARY|^== " "$L/memcheck.txt" | head -60
M="--rep-ms 20 --merge-time --providers splitkv --special --labels 1x --heads 12 --qlen 2 4 8"
for r in 1 2; do
  fits 40 base_$r && bench base_$r 50 $M
  fits 40 ds4w2_$r && bench ds4w2_$r 50 $M --merge-long-partials 16 --merge-rows 4 \
    --merge-d-split 4 --merge-num-warps 2
done
pack_logs
