# Session 58's second call (carry run178.sh): `splitkv bench --ablation loop_piece_cost`, the
# Gluon program loop's piece cost 2-8 on its 64-row head blocks (one a request; run177: 4-8
# ahead of the default 2 at 12 heads x qlen 4 on the H100), one round. The first attempt (one
# round of 7 costs, then a second) lost the machine mid-call with no logs back, and later ones
# found none: one round of 4 costs on the one-head-block shapes within 200 s (12 and 16 heads
# x qlen 4 and the seeded batches first), each shape's rows kept as it ends. Predictions:
# docs/perf.md "Session 58: predictions for run178". Logs come back as one archive.
source tools/device_call.sh
timeout 200 python3 -m splitkv bench --ablation loop_piece_cost --heads 12 16 32 64 --rep-ms 30 --out $L/cost --tag cost > $L/cost.txt 2>&1; echo "cost exit $? at ${SECONDS} s"
grep -E "^\[|p50|unsupported|wrong|crashed" $L/cost.txt | cut -c1-110
pack_logs
