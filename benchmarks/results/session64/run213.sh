# Session 64's third call (carry run213.sh and .peers; either GPU, ~580 s): the memcheck subset
# (now with the Gluon program loop on gathered pages 1 and 100 beside corrupt page ids and
# lengths), then issue 5's standing at v0.2.76 (page 64: unchanged kernels; on an H200 the first
# figures since session 34) and, time left, the cascade. Predictions: docs/perf.md "Session 64:
# predictions for run213".
CALL_LIMIT=580
source tools/device_call.sh
memcheck 330
fits 170 standing && bench standing 180 --rep-ms 20 --providers splitkv,triton-peer --special \
  --labels ragged 1x --heads 12 --qlen 1 2 4
fits 100 cascade && bench cascade 110 --rep-ms 20 --providers splitkv,splitkv-prefix \
  --special --labels 8x327600 48 --heads 12 --qlen 1
pack_logs
