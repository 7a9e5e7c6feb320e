# Session 63's sixth call, run inline on the warm H100: the balanced Triton tile at page 100 on
# 4 warps (the default) against 8, 12 heads x qlen 1 and 2, ragged and one-long.
CALL_LIMIT=200
source tools/device_call.sh
Q="--special --labels ragged 1x --heads 12 --qlen 1 2 --page-size 100 --no-warp-specialized \
  --providers splitkv --rep-ms 15"
bench warps4 80 $Q
bench warps8 100 $Q --num-warps 8
pack_logs
