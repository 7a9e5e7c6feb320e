# Session 72 (carry run231.sh and .peers; either GPU): on an H200 first issue 5's standing
# (12 heads page 64, qlen 1 / 2 / 4, the Triton peer beside it; unmeasured there since session
# 34) and the shared-prefix batches (the cascade against the plain kernel); then, on either
# GPU, session 71's run230 whole: 128 heads x qlen 1 at gathered pages 4, 12 and 100, lead 0
# (lead0) against the page ids' lead at every page size (leadall), interleaved, three rounds,
# to settle GATHER_IDS_LEAD_PAGES_UNDER (8 since v0.2.79). Predictions: docs/perf.md
# "Session 72: predictions for run231". ~560 s on an H200, ~260 s on an H100.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
issue5_on_h200  # tools/device_call.sh since session 73: the commands this call ran inline
src_variant lead0 gathered_keys.py 's/^GATHER_IDS_LEAD = gl.constexpr(1)/GATHER_IDS_LEAD = gl.constexpr(0)/'
src_variant leadall gathered_keys.py \
  's/^GATHER_IDS_LEAD_PAGES_UNDER = gl.constexpr(8)/GATHER_IDS_LEAD_PAGES_UNDER = gl.constexpr(1 << 20)/'
W="--special --labels ragged 1x --heads 128 --qlen 1 --page-size 4 12 100 --providers splitkv --rep-ms 10"
for r in 1 2 3; do
  fits 25 lead0_p$r && PYTHONPATH=/tmp/lead0/src bench lead0_p$r 40 $W
  fits 25 leadall_p$r && PYTHONPATH=/tmp/leadall/src bench leadall_p$r 40 $W
done
pack_logs
