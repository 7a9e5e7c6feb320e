# Session 69's last call on ~340 s of device time (carry run224.sh): on an H200 issue 5's qlen 4
# standing alone (the blocker; splitkv only, the read ceiling in the same run), then on either
# GPU run222's first A/B (the page ids a block ahead at 128 heads, page 1 / 100) if it fits.
CALL_LIMIT=${CALL_LIMIT:-130}
source tools/device_call.sh
src_variant w4ids gathered_keys.py 's/^GATHER_IDS_LEAD = gl.constexpr(0)/GATHER_IDS_LEAD = gl.constexpr(1)/'
W="--special --labels ragged 1x --heads 128 --qlen 1 --page-size 1 100 --providers splitkv --rep-ms 10"
if grep -q H200 "$L/gpu_env.txt"; then
  fits 60 standing4 && bench standing4 70 --rep-ms 20 --providers splitkv \
    --special --labels ragged 1x --heads 12 --qlen 4
fi
fits 40 base_w && bench base_w 50 $W
fits 40 w4ids_w && PYTHONPATH=/tmp/w4ids/src bench w4ids_w 50 $W
pack_logs
