# Session 78's first call (carry run249.sh and .peers; asks for an H200; ~450 s there, ~200 s
# on an H100). On an H200 (none since session 34): issue 5's standing at v0.2.82
# (`issue5_on_h200`: 12 heads, page 64, qlen 1 / 2 / 4 ragged and one-long beside the Triton
# peer; the cascade on 8 x 327,600 sharing 308,736 and the 6-group mix beside the plain
# kernel), then session 62's copy_rows ablation (session 63's item: do 16-row copies pay on
# the H200's 64-row tile?), one round. On an H100: the same standing at v0.2.82 (the last H100
# standing is session 57's, v0.2.68). Predictions: docs/perf.md "Session 78: predictions for
# run249".
CALL_LIMIT=${CALL_LIMIT:-560}
source tools/device_call.sh
if issue5_on_h200; then
  fits 110 copy_rows && bench copy_rows 120 --ablation copy_rows --rep-ms 10
else
  bench standing 170 --rep-ms 20 --providers splitkv,triton-peer --special --labels ragged 1x \
    --heads 12 --qlen 1 2 4
fi
pack_logs
