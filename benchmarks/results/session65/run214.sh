# Session 65 (carry run214.sh; either GPU, ~400 s): gathered key rows (opt-in, --warp-specialized)
# against the Triton tiles (--no-warp-specialized) where run212 did not reach: pages 4 and 12 at
# 12 heads x qlen 1 / 2 / 4 (issue 5's ragged and one-long batches), 128 heads x qlen 1 at pages
# 1 and 100 (the alternating consumers), and page 64's bulk copies in the same run as the
# reference the gathered rows are held to. Predictions: docs/perf.md "Session 65: predictions
# for run214".
CALL_LIMIT=560
source tools/device_call.sh
COMMON="--special --labels ragged 1x --providers splitkv --rep-ms 10"
fits 110 gather && bench gather 130 $COMMON --heads 12 --qlen 1 2 4 --page-size 4 12 --warp-specialized
fits 100 triton && bench triton 120 $COMMON --heads 12 --qlen 1 2 4 --page-size 4 12 --no-warp-specialized
fits 60 copies && bench copies 80 $COMMON --heads 12 --qlen 1 2 4 --page-size 64
fits 90 gather128 && bench gather128 110 $COMMON --heads 128 --qlen 1 --page-size 1 100 --warp-specialized
fits 90 triton128 && bench triton128 110 $COMMON --heads 128 --qlen 1 --page-size 1 100 --no-warp-specialized
pack_logs
