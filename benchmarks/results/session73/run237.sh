# Session 73 (carry run237.sh and .peers; either GPU): on an H200 issue 5's standing and the
# shared-prefix batches (`issue5_on_h200`; unmeasured there since session 34); then, on either
# GPU, the gathered pages past the lead's cut that no run has timed (9, 10, 11, 14), 128 heads
# x qlen 1: the lead at every page (leadall) against the default (lead 0 there), interleaved,
# two rounds. Predictions: docs/perf.md "Session 73: predictions for run237". ~420 s on an
# H200, ~120 s on an H100.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
issue5_on_h200
src_variant leadall gathered_keys.py \
  's/^GATHER_IDS_LEAD_PAGES_UNDER = gl.constexpr(8)/GATHER_IDS_LEAD_PAGES_UNDER = gl.constexpr(1 << 20)/'
W="--special --labels ragged 1x --heads 128 --qlen 1 --page-size 9 10 11 14 --providers splitkv --rep-ms 10"
for r in 1 2; do
  fits 40 leadall_p$r && PYTHONPATH=/tmp/leadall/src bench leadall_p$r 150 $W
  fits 40 default_p$r && bench default_p$r 150 $W
done
pack_logs
