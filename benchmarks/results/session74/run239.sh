# Session 74 (carry run239.sh and .peers; either GPU): on an H200 issue 5's standing and the
# shared-prefix batches (`issue5_on_h200`); then, on either GPU, MLA's balanced merge with
# several rows a program on four or eight warps, one warp to two rows (merge_rows_kernel
# lays a [rows, partials, columns] tile's warps on its rows: TTGIR warpsPerCTA [4, 1, 1], so
# each fold reduces inside a thread), against the default one row a one-warp program, 12
# heads, ragged and one-long, `--merge-time`, two rounds interleaved:
#   r8s16: 8 rows, 16 partials a step, 4 warps (96 registers; one-long qlen 4: 2,304 programs)
#   r8s32: 8 rows, 32 a step, 4 warps (179 registers)
# Predictions: docs/perf.md "Session 74: predictions for run239". ~140 s on an H100.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
issue5_on_h200
M="--rep-ms 20 --merge-time --providers splitkv --special --labels ragged 1x --heads 12"
for r in 1 2; do
  fits 30 base_$r && bench base_$r 60 $M --qlen 2 4
  fits 30 r8s16_$r && bench r8s16_$r 60 $M --qlen 2 4 --merge-rows 8 --merge-block-s 16 --merge-num-warps 4
  fits 30 r8s32_$r && bench r8s32_$r 60 $M --qlen 2 4 --merge-rows 8 --merge-block-s 32 --merge-num-warps 4
done
pack_logs
