# Session 74 (carry run240.sh and .peers; asks for either GPU, useful only on an H200): issue
# 5's standing and the shared-prefix batches (`issue5_on_h200`, ~300 s), unmeasured on an H200
# since session 34. On an H100 it stops after the start (the H100's standing: run235, run239).
# Predictions: docs/perf.md "Session 74: predictions for run240".
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
issue5_on_h200 || echo "not an H200: nothing run"
pack_logs
