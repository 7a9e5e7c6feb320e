# Session 73 (carry run238.sh and .peers; either GPU): on an H200 issue 5's standing and the
# shared-prefix batches (`issue5_on_h200`); then, on either GPU, MLA's balanced merge tile of
# partials at one row a program: the default 64 a step (168 registers, 12 one-warp programs an
# SM by registers) against 32 (96 registers, 21 an SM) and 16 (63, 32), 12 heads, ragged and
# one-long at qlen 2 / 4, `--merge-time`, two rounds interleaved. Predictions: docs/perf.md
# "Session 73: predictions for run238". ~420 s on an H200, ~160 s on an H100.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
issue5_on_h200
M="--rep-ms 20 --merge-time --providers splitkv --special --labels ragged 1x --heads 12 --qlen 2 4"
for r in 1 2; do
  fits 30 base_$r && bench base_$r 60 $M
  fits 30 s32_$r && bench s32_$r 60 $M --merge-block-s 32
  fits 30 s16_$r && bench s16_$r 60 $M --merge-block-s 16
done
pack_logs
