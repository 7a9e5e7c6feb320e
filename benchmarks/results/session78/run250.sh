# Session 78's call after six refused H200 starts (carry run250.sh and .peers; any GPU; ~450 s
# on an H200, ~330 s on an H100). On an H200: as run249 (issue 5's standing at v0.2.83, whose
# kernels and plans are v0.2.82's, then the copy_rows ablation). On an H100: issue 5's standing
# at v0.2.83 (12 heads, page 64, qlen 1 / 2 / 4 ragged and one-long beside the Triton peer; the
# last H100 standing is session 57's, v0.2.68), then the cascade on 8 x 327,600 sharing
# 308,736 and the 6-group mix beside the plain kernel. Predictions: docs/perf.md "Session 78:
# predictions for run249" (the H100's cascade: "Session 78: predictions for run250").
CALL_LIMIT=${CALL_LIMIT:-560}
source tools/device_call.sh
if issue5_on_h200; then
  fits 110 copy_rows && bench copy_rows 120 --ablation copy_rows --rep-ms 10
else
  bench standing 170 --rep-ms 20 --providers splitkv,triton-peer --special --labels ragged 1x \
    --heads 12 --qlen 1 2 4
  fits 110 prefix && bench prefix 130 --rep-ms 20 --providers splitkv,splitkv-prefix \
    --special --labels 8x327600 48 --heads 12 --qlen 1
fi
pack_logs
