# Session 63's last call (carry run209.sh; either GPU, ~200 s): uniform splits of the 32-row
# Triton tile (12 and 16 heads x qlen 2) at page 100, the default (32-key blocks, two chains,
# 2 stages) against 64-key blocks, as the balanced 32-row tile gained 7-14% from them (run204).
# Predictions: docs/perf.md "Session 63: predictions for run209".
CALL_LIMIT=240
source tools/device_call.sh
U="--heads 12 16 --context 8192 68096 --batch 8 48 --qlen 2 --page-size 100 \
  --no-warp-specialized --providers splitkv --rep-ms 10"
for round in 1 2; do
  fits 50 n32_$round && bench n32_$round 60 $U
  fits 50 n64_$round && bench n64_$round 60 $U --block-n 64
done
pack_logs
