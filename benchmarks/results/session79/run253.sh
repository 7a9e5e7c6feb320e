# Session 79's first call (carry run253.sh and .peers; asks for an H200). Only on an H200
# (none since session 34): issue 5's standing at v0.2.83 (`issue5_on_h200`), then session
# 62's copy_rows ablation, one round. On any other GPU it stops at once (the H100's standing
# at v0.2.83 is session 78's run250-251). Predictions: docs/perf.md "Session 79: predictions
# for run253".
CALL_LIMIT=${CALL_LIMIT:-560}
source tools/device_call.sh
if issue5_on_h200; then
  fits 110 copy_rows && bench copy_rows 120 --ablation copy_rows --rep-ms 10
fi
pack_logs
