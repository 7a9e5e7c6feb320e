# Session 72 (carry run232.sh and .peers; either GPU): on an H200 first issue 5's standing
# (12 heads page 64, qlen 1 / 2 / 4, the Triton peer beside it) and the shared-prefix batches,
# as run231 planned; then, on either GPU, the gathered pages under the lead's cut that no run
# has timed (2, 3, 6), 128 heads x qlen 1: lead 0 (lead0) against the default (the lead
# there since v0.2.79), interleaved, three rounds. Predictions: docs/perf.md "Session 72:
# predictions for run232". ~520 s on an H200, ~150 s on an H100.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
issue5_on_h200  # tools/device_call.sh since session 73: the commands this call ran inline
src_variant lead0 gathered_keys.py 's/^GATHER_IDS_LEAD = gl.constexpr(1)/GATHER_IDS_LEAD = gl.constexpr(0)/'
W="--special --labels ragged 1x --heads 128 --qlen 1 --page-size 2 3 6 --providers splitkv --rep-ms 10"
for r in 1 2 3; do
  fits 25 lead0_p$r && PYTHONPATH=/tmp/lead0/src bench lead0_p$r 60 $W
  fits 25 default_p$r && bench default_p$r 60 $W
done
pack_logs
