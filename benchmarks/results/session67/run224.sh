# Session 67 (carry run224.sh and .peers; either GPU, CALL_LIMIT from the command, ~400 s): run222
# cut to what ~400 s holds after the session's device time went to refused starts: the page
# ids a block ahead beside four producer warps (w4ids) against the tree first, then on an H200
# issue 5's standing. Predictions: docs/perf.md "Session 66: predictions for run222".
CALL_LIMIT=${CALL_LIMIT:-400}
source tools/device_call.sh
src_variant w4ids gathered_keys.py \
  's/^GATHER_IDS_AHEAD = gl.constexpr(False)/GATHER_IDS_AHEAD = gl.constexpr(True)/'
W="--special --labels ragged 1x --heads 128 --qlen 1 --page-size 1 100 --providers splitkv --rep-ms 10"
N="--special --labels ragged 1x --heads 12 --qlen 4 --page-size 1 100 --providers splitkv --rep-ms 10"
fits 40 base_w && bench base_w 50 $W
fits 40 w4ids_w && PYTHONPATH=/tmp/w4ids/src bench w4ids_w 50 $W
fits 40 base_n && bench base_n 45 $N
fits 40 w4ids_n && PYTHONPATH=/tmp/w4ids/src bench w4ids_n 45 $N
if grep -q H200 "$L/gpu_env.txt"; then
  fits 150 standing && bench standing 160 --rep-ms 20 --providers splitkv,triton-peer \
    --special --labels ragged 1x --heads 12 --qlen 1 2 4
fi
pack_logs
