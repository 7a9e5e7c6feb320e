# Session 65 (carry run216.sh; right after run214 on the same warm H100): page 64's bulk copies
# at 128 heads (the reference run214's gathered 128-head figures lacked), and run212's page 100
# at 12 heads x qlen 1 / 2 / 4, gathered rows against the Triton tiles.
CALL_LIMIT=300
source tools/device_call.sh
COMMON="--special --labels ragged 1x --providers splitkv --rep-ms 10"
fits 60 copies128 && bench copies128 80 $COMMON --heads 128 --qlen 1 --page-size 64
fits 60 gather && bench gather 80 $COMMON --heads 12 --qlen 1 2 4 --page-size 100 --warp-specialized
fits 60 triton && bench triton 80 $COMMON --heads 12 --qlen 1 2 4 --page-size 100 --no-warp-specialized
pack_logs
