# Session 76 (carry run247.sh and .peers; either GPU; ~450 s on an H100; written after the
# session's device time ran out). On an H200 first issue 5's standing (`issue5_on_h200`).
# run244 (launch order) and run246 (half the launches: 4 slices of 128 on 2 warps) left the
# default merge sized by partials level: its tail is the programs' work, ~5 waves of ~1 us
# programs at 12 resident an SM (167 registers on one warp). The registers are the bigger of
# the short rows' tile (ROWS x LONG_PARTIALS x 64) and the long rows' (BLOCK_S x 64):
# `tools/inspect_merge.py --block-d 64 --heads 12 --qlen 4 --rows R --long-partials LP
# --block-s S` gives lp16 r4 s64 (the default) 167, lp8 r4 s16 80, lp4 r4 s16 64, lp16 r2 s16
# 80. Fewer registers hold 25-32 programs an SM, but lp8 has 16 long slots (1,344 programs a
# slice at one-long 12 heads x qlen 4, against 960), lp4 32 (2,112), and r2 twice the short
# programs (1,536).
# Variants (all pinned knobs, so each is the merge sized by partials as named):
#   lp8r4s16, lp4r4s16, lp16r2s16 against the default; 12 and 16 heads one-long qlen 1 / 2 /
#   4 / 8 (at qlen 1 the default lost 0.3% at 12 and 16 heads), `--merge-time`, two rounds.
#   Then the merge stamps of the default and lp8r4s16.
# Predictions: docs/perf.md "Session 76: predictions for run247".
CALL_LIMIT=${CALL_LIMIT:-560}
source tools/device_call.sh
issue5_on_h200
M="--rep-ms 20 --merge-time --providers splitkv --special --labels 1x --heads 12 16 --qlen 1 2 4 8"
for r in 1 2; do
  fits 60 base_$r && bench base_$r 80 $M
  fits 60 lp8r4s16_$r && bench lp8r4s16_$r 80 $M --merge-long-partials 8 --merge-rows 4 \
    --merge-block-s 16
  fits 60 lp4r4s16_$r && bench lp4r4s16_$r 80 $M --merge-long-partials 4 --merge-rows 4 \
    --merge-block-s 16
  fits 60 lp16r2s16_$r && bench lp16r2s16_$r 80 $M --merge-long-partials 16 --merge-rows 2 \
    --merge-block-s 16
done
for v in base lp8r4s16; do
  knobs=""; [ $v = lp8r4s16 ] && knobs="--merge-long-partials 8 --merge-rows 4 --merge-block-s 16"
  fits 60 timeline_$v && timeout 60 python3 tools/kernel_timeline.py --shape one-long --qlen 4 \
    --merge-stamps $knobs --out "$L/timeline_$v" > "$L/timeline_$v.txt" 2>&1
  grep -m2 -e "run (graph" -e "merge programs" "$L/timeline_$v.txt" | cut -c1-300
done
pack_logs
