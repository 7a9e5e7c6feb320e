# Session 62 (carry run199.sh; ~250 s of the 390 left): run196's held-out copy-height check on
# the heights it dropped (32 x qlen 2, 64 x qlen 1: `--heads` narrowed the ablation then),
# two rounds. Predictions: docs/perf.md "Session 62: predictions for run199".
CALL_LIMIT=240
source tools/device_call.sh
for round in 1 2; do
  fits 100 r$round && bench r$round $((CALL_LIMIT - SECONDS - 5)) --ablation copy_rows_held_out \
    --heads 32 64 --rep-ms 10
done
pack_logs
