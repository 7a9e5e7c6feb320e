# Session 61 (carry run193.sh; either GPU, ~200 s): run190 had pages 48 and 528 (the Gluon
# tile's keys in 16-row copies) 2.5% faster than page 64 (one 64-row copy) at 12 heads x qlen 4.
# Copy size or noise? Pages by their copy rows: 64 and 192 (64 rows), 96 and 160 (32), 48 and
# 80 (16), 24 (8); issue 5's ragged and one-long batches at qlen 4 and 2, two rounds.
# Predictions: docs/perf.md "Session 61: predictions for run193".
CALL_LIMIT=560
source tools/device_call.sh
for round in 1 2; do
  fits 200 r$round && bench r$round 240 --special --labels ragged 1x --heads 12 --qlen 4 2 \
    --page-size 64 192 96 160 48 80 24 --rep-ms 20
done
pack_logs
