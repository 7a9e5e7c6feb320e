# Session 65 (carry run215.sh; right after run213 on the same warm H100, whose memcheck ran out
# of its 330 s compiling): the memcheck subset again on the warm compile cache, then what fits
# of run212's timings: gathered rows against the Triton tiles at page 1, qlen 2 and 4.
# Predictions: docs/perf.md "Session 64: predictions for run213 / run212".
CALL_LIMIT=580
source tools/device_call.sh
memcheck 420
COMMON="--special --labels ragged 1x --heads 12 --qlen 2 4 --providers splitkv --rep-ms 10"
fits 70 gather && bench gather 80 $COMMON --page-size 1 --warp-specialized
fits 60 triton && bench triton 70 $COMMON --page-size 1 --no-warp-specialized
pack_logs
