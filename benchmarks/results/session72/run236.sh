# Session 72 (carry run236.sh and .peers; either GPU): the merge folding several rows of a
# request a program (the plan's merge_rows, GQA's since v0.2.41) on MLA's one-long batch at 12
# heads x qlen 2 / 4, where run235 timed the merge alone at 6.5% of the qlen 4 call (18,432
# one-warp programs, 4.4 waves): the default (one row) against four tilings by the CLI's
# knobs, two rounds, `--merge-time`. On an H200 first issue 5's standing (no prefix: the
# device time left is ~420 s). Predictions: docs/perf.md "Session 72: predictions for run236".
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
if grep -q H200 "$L/gpu_env.txt"; then
  fits 150 standing && bench standing 170 --rep-ms 20 --providers splitkv,triton-peer \
    --special --labels ragged 1x --heads 12 --qlen 1 2 4
fi
M="--rep-ms 20 --merge-time --providers splitkv --special --labels 1x --heads 12 --qlen 2 4"
for r in 1 2; do
  fits 20 base_$r && bench base_$r 40 $M
  fits 20 r8s8_$r && bench r8s8_$r 40 $M --merge-rows 8 --merge-block-s 8
  fits 20 r4s16_$r && bench r4s16_$r 40 $M --merge-rows 4 --merge-block-s 16
  fits 20 r4s32w2_$r && bench r4s32w2_$r 40 $M --merge-rows 4 --merge-block-s 32 --merge-num-warps 2
  fits 20 r8s16w2_$r && bench r8s16w2_$r 40 $M --merge-rows 8 --merge-block-s 16 --merge-num-warps 2
done
pack_logs
