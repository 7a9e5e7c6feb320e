# Session 76 (carry run247.sh and .peers; either GPU; ~330 s on an H100; written after the
# session's device time ran out). On an H200 first issue 5's standing (`issue5_on_h200`).
# run244 (launch order) and run246 (half the launches: 4 slices of 128 on 2 warps) left the
# default merge sized by partials level: its tail is the programs' work, ~5 waves of ~1 us
# programs at 12 resident an SM (167 registers on one warp). The registers are the bigger of
# the short rows' tile (ROWS x short tile x 64; the short tile is LONG_PARTIALS) and the long
# rows' (BLOCK_S x 64). `tools/inspect_merge.py --block-d 64 --heads 12 --qlen 4 --rows 4
# --long-partials LP --block-s S`: lp16 s64 (the default) 167, lp8 s16 80, lp4 s16 64, and
# `st4` (a src_variant: the short rows fold in steps of 4 partials, up to LONG_PARTIALS = 16)
# at s16 64 (PYTHONPATH=/tmp/st4/src: the tools honour it, tools/checkout_src.py). Programs
# a slice at one-long 12 heads x qlen 4: lp16 960 (8 long slots), lp8 1,344 (16), lp4 2,112
# (32), st4 960. Interpreter: tests/test_merge_by_length.py 13 passed on st4.
# Variants (pinned knobs: each is the merge sized by partials as named), two rounds, 12 and 16
# heads (128 held out) one-long qlen 1 / 2 / 4 / 8, `--merge-time`: lp8r4s16, lp4r4s16, st4
# (lp16 r4 s16) against the default. Then the merge stamps of the default and st4 (one-long qlen 4).
# Predictions: docs/perf.md "Session 76: predictions for run247".
CALL_LIMIT=${CALL_LIMIT:-560}
source tools/device_call.sh
# SKIP_STANDING=1: a second call on the same H200 lease, after the standing ran.
[ -n "${SKIP_STANDING:-}" ] || issue5_on_h200
src_variant st4 merge_by_length.py \
  's|^                      R, BLOCK_D, LONG_PARTIALS, LONG_PARTIALS, WRITE_LSE, HAS_WINDOW,$|                      R, BLOCK_D, 4, LONG_PARTIALS, WRITE_LSE, HAS_WINDOW,|'
PYTHONPATH=/tmp/st4/src timeout 60 python3 tools/inspect_merge.py --block-d 64 --heads 12 \
  --qlen 4 --rows 4 --long-partials 16 --block-s 16 | tail -n 1
M="--rep-ms 20 --merge-time --providers splitkv --special --labels 1x --heads 12 16 128 --qlen 1 2 4 8"
for r in 1 2; do
  fits 60 base_$r && bench base_$r 80 $M
  fits 60 lp8r4s16_$r && bench lp8r4s16_$r 80 $M --merge-long-partials 8 --merge-rows 4 \
    --merge-block-s 16
  fits 60 lp4r4s16_$r && bench lp4r4s16_$r 80 $M --merge-long-partials 4 --merge-rows 4 \
    --merge-block-s 16
  fits 60 st4_$r && PYTHONPATH=/tmp/st4/src bench st4_$r 80 $M --merge-long-partials 16 \
    --merge-rows 4 --merge-block-s 16
done
for v in base st4; do
  src=$PWD/src knobs=""
  [ $v = st4 ] && src=/tmp/st4/src \
    knobs="--merge-long-partials 16 --merge-rows 4 --merge-block-s 16"
  fits 50 timeline_$v && PYTHONPATH=$src timeout 50 python3 tools/kernel_timeline.py \
    --shape one-long --qlen 4 --merge-stamps $knobs --out "$L/timeline_$v" \
    > "$L/timeline_$v.txt" 2>&1
  grep -m2 -e "run (graph" -e "merge programs" "$L/timeline_$v.txt" | cut -c1-300
done
# Session 77: the memcheck subset after session 76's review (BAD_LENGTHS through
# mla_decode_corrupt) and v0.2.82's shared store of the merges' rows (~94 s cold on an H100).
fits 130 memcheck && memcheck 120
pack_logs
