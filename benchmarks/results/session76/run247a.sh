# Session 76 (carry run247a.sh and .peers; either GPU; ~100-170 s): the part of run247.sh that fits the
# session's last 282 s of device time. 12 heads one-long qlen 4 and 8, two rounds: the default
# merge sized by partials (167 registers) against lp8 r4 s16 and lp16 r2 s16 (80 registers).
# Predictions: docs/perf.md "Session 76: predictions for run247" (this is its first half).
CALL_LIMIT=${CALL_LIMIT:-170}
source tools/device_call.sh
M="--rep-ms 20 --merge-time --providers splitkv --special --labels 1x --heads 12 --qlen 4 8"
for r in 1 2; do
  fits 20 base_$r && bench base_$r 60 $M
  fits 20 lp8r4s16_$r && bench lp8r4s16_$r 60 $M --merge-long-partials 8 --merge-rows 4 \
    --merge-block-s 16
  fits 20 lp16r2s16_$r && bench lp16r2s16_$r 60 $M --merge-long-partials 16 --merge-rows 2 \
    --merge-block-s 16
done
pack_logs
