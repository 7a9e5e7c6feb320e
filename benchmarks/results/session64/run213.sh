# Session 64's third call (carry run213.sh and .peers; either GPU, ~330-540 s): the memcheck subset
# (now with the Gluon program loop on gathered pages 1 and 100 beside corrupt page ids and
# lengths), then on an H200 issue 5's standing at v0.2.76 (page 64: unchanged kernels; the first
# figures there since session 34). Predictions: docs/perf.md "Session 64:
# predictions for run213".
CALL_LIMIT=540
source tools/device_call.sh
memcheck 330
if grep -q H200 "$L/gpu_env.txt"; then  # on an H100, run207's standing stands (same kernels)
  fits 170 standing && bench standing 180 --rep-ms 20 --providers splitkv,triton-peer \
    --special --labels ragged 1x --heads 12 --qlen 1 2 4
fi
pack_logs
