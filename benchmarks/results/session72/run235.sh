# Session 72 (carry run235.sh and .peers; either GPU): on an H200 issue 5's standing (12 heads
# page 64, qlen 1 / 2 / 4, the Triton peer beside it; unmeasured there since session 34) and
# the shared-prefix batches (predictions: docs/perf.md "Session 72: predictions for run231");
# on an H100, the merge's share at 12 heads x qlen 4 on the ragged and one-long batches
# (`--merge-time`: stage 2 alone beside the call). Predictions: docs/perf.md "Session 72:
# predictions for run235". ~330 s on an H200, ~50 s on an H100.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
# issue5_on_h200: tools/device_call.sh since session 73, the commands this call ran inline
if ! issue5_on_h200; then
  fits 40 merge_q4 && bench merge_q4 60 --rep-ms 20 --merge-time --providers splitkv \
    --special --labels ragged 1x --heads 12 --qlen 1 4
fi
pack_logs
