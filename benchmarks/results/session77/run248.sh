# Session 77 (carry run248.sh and .peers; either GPU; ~150 s on an H100). run247: every
# variant of fewer registers lost at 12 and 16 heads, st4 (short rows in steps of 4, long rows
# in tiles of 16) +2.4% at 12 heads x qlen 4; its stamps: the short programs' waves end sooner
# (last start 4.0 us after the wait against 7.5) but the long rows' chain of 16-partial steps
# runs 13.5 us (the default's 64-partial tiles: 4.75). st4 on tiles of 32 for the long rows:
# 96 registers (`PYTHONPATH=/tmp/st4/src python tools/inspect_merge.py --block-d 64 --heads 12
# --qlen 4 --rows 4 --long-partials 16 --block-s 32`; the default 167), ~21 resident an SM
# against 12, ~5 steps a long row against 3. Predictions: docs/perf.md "Session 77:
# predictions for run248".
CALL_LIMIT=${CALL_LIMIT:-400}
source tools/device_call.sh
src_variant st4 merge_by_length.py \
  's|^                      R, BLOCK_D, LONG_PARTIALS, LONG_PARTIALS, WRITE_LSE, HAS_WINDOW,$|                      R, BLOCK_D, 4, LONG_PARTIALS, WRITE_LSE, HAS_WINDOW,|'
PYTHONPATH=/tmp/st4/src timeout 60 python3 tools/inspect_merge.py --block-d 64 --heads 12 \
  --qlen 4 --rows 4 --long-partials 16 --block-s 32 | tail -n 1
M="--rep-ms 20 --merge-time --providers splitkv --special --labels 1x --heads 12 16 --qlen 1 2 4 8"
S32="--merge-long-partials 16 --merge-rows 4 --merge-block-s 32"
for r in 1 2; do
  fits 60 base_$r && bench base_$r 80 $M
  fits 60 st4s32_$r && PYTHONPATH=/tmp/st4/src bench st4s32_$r 80 $M $S32
done
for v in base st4s32; do
  src=$PWD/src knobs=""
  [ $v = st4s32 ] && src=/tmp/st4/src knobs=$S32
  fits 50 timeline_$v && PYTHONPATH=$src timeout 50 python3 tools/kernel_timeline.py \
    --shape one-long --qlen 4 --merge-stamps $knobs --out "$L/timeline_$v" \
    > "$L/timeline_$v.txt" 2>&1
  grep -m2 -e "run (graph" -e "merge programs" "$L/timeline_$v.txt" | cut -c1-300
done
pack_logs
