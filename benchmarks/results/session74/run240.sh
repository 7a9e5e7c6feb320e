# Session 74 (carry run240.sh and .peers; either GPU): on an H200 issue 5's standing and the
# shared-prefix batches (`issue5_on_h200`, ~300 s), unmeasured on an H200 since session 34.
# Then, on either GPU, the merge's launch order: its programs start in grid order, request 0's
# rows first; `rev` maps program rows to requests last-first (a src_variant of
# kernels/merge.py), so ragged's long request (the last of 8) starts in the first wave and
# one-long's (the first of 48) in the last. 12 heads, qlen 2 / 4, `--merge-time`, two rounds
# interleaved. Predictions: docs/perf.md "Session 74: predictions for run240". ~60 s on an
# H100 after the start.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
issue5_on_h200
src_variant rev merge.py 's|request = row_id // ROWS$|request = batch - 1 - row_id // ROWS|'
M="--rep-ms 20 --merge-time --providers splitkv --special --labels ragged 1x --heads 12 --qlen 2 4"
for r in 1 2; do
  fits 30 base_$r && bench base_$r 60 $M
  fits 30 rev_$r && PYTHONPATH=/tmp/rev/src bench rev_$r 60 $M
done
pack_logs
