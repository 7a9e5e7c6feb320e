# Session 71 (its first call got no machine; a second at 08:53 ran one round, `CALL_LIMIT=95`,
# run230/; session 72 runs all three): is lead 1's page-100
# one-long loss (run222/225/226 medians 304.8 -> 318.8 us) real, and where between page 1 (lead
# 1 -6% ragged) and page 100 does the lead stop paying? 128 heads x qlen 1 at gathered pages 4,
# 12 and 100, lead 0 (lead0) against lead 1 at every page size (leadall), interleaved, three
# rounds. The default since v0.2.79 is leadall's path at page 4 and lead0's at pages 12 and 100
# (GATHER_IDS_LEAD_PAGES_UNDER = 8). Carry run230.sh and .peers; ~190 s with the start.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
src_variant lead0 gathered_keys.py 's/^GATHER_IDS_LEAD = gl.constexpr(1)/GATHER_IDS_LEAD = gl.constexpr(0)/'
src_variant leadall gathered_keys.py \
  's/^GATHER_IDS_LEAD_PAGES_UNDER = gl.constexpr(8)/GATHER_IDS_LEAD_PAGES_UNDER = gl.constexpr(1 << 20)/'
W="--special --labels ragged 1x --heads 128 --qlen 1 --page-size 4 12 100 --providers splitkv --rep-ms 10"
for r in 1 2 3; do
  fits 25 lead0_p$r && PYTHONPATH=/tmp/lead0/src bench lead0_p$r 40 $W
  fits 25 leadall_p$r && PYTHONPATH=/tmp/leadall/src bench leadall_p$r 40 $W
done
pack_logs
