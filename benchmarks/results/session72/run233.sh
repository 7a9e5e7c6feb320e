# Session 72 (carry run233.sh and .peers; either GPU): on an H200 issue 5's standing (12 heads
# page 64, qlen 1 / 2 / 4, the Triton peer beside it; unmeasured there since session 34) and
# the shared-prefix batches, as run231 and run232 planned (predictions: docs/perf.md "Session
# 72: predictions for run231"); on an H100, the two gathered pages under the lead's cut left
# untimed (5, 7), 128 heads x qlen 1, lead 0 against the default, two rounds. ~340 s on an
# H200, ~110 s on an H100.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
# issue5_on_h200: tools/device_call.sh since session 73, the commands this call ran inline
if ! issue5_on_h200; then
  src_variant lead0 gathered_keys.py 's/^GATHER_IDS_LEAD = gl.constexpr(1)/GATHER_IDS_LEAD = gl.constexpr(0)/'
  W="--special --labels ragged 1x --heads 128 --qlen 1 --page-size 5 7 --providers splitkv --rep-ms 10"
  for r in 1 2; do
    fits 25 lead0_p$r && PYTHONPATH=/tmp/lead0/src bench lead0_p$r 50 $W
    fits 25 default_p$r && bench default_p$r 50 $W
  done
fi
pack_logs
