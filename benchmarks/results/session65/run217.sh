# Planned in session 65 for session 66 (carry run217.sh; either GPU, ~400 s): the gathering
# producer's three untimed variants, built on the device by editing copies of this tree's src:
#   r24: beside two consumer warpgroups (128 heads, the alternating consumers) the producer
#        at COPY_PRODUCER_REGS (24) rather than GATHER_PRODUCER_REGS (56), which leaves the
#        default consumer 248 registers rather than 216 (SASS: its spills 30/38 -> 6/6 STL/LDL,
#        the bulk-copy build's; the producer's own 15/16, ~4 a block);
#   w4:  GATHER_WARPS 4 (kernels/gathered_keys.py);
#   ids: GATHER_IDS_AHEAD (a block's page ids loaded a block ahead).
# First the GPU tests of gathered pages on all three edits, then each variant against the tree.
# Predictions: docs/perf.md "Session 65: predictions for run217".
CALL_LIMIT=560
source tools/device_call.sh
# It ran in session 66 as session66/run219.sh (with the H200 standing first). The edits, made
# by tools/device_call.sh's src_variant on a copy of src/:
R24=(mla_warp_specialized.py 's/\[232, PRODUCER_REGS\]/[232, COPY_PRODUCER_REGS]/'
     mla_warp_specialized_loop.py 's/\[232, PRODUCER_REGS\]/[232, COPY_PRODUCER_REGS]/')
W4=(gathered_keys.py 's/^GATHER_WARPS = gl.constexpr(1)/GATHER_WARPS = gl.constexpr(4)/')
IDS=(gathered_keys.py 's/^GATHER_IDS_AHEAD = gl.constexpr(False)/GATHER_IDS_AHEAD = gl.constexpr(True)/')
src_variant r24 "${R24[@]}"; src_variant w4 "${W4[@]}"; src_variant w4r24 "${R24[@]}" "${W4[@]}"
src_variant ids "${IDS[@]}"; src_variant all "${R24[@]}" "${W4[@]}" "${IDS[@]}"
PYTHONPATH=/tmp/all/src:$PWD/tests timeout 120 python3 -m pytest tests/test_any_page_size.py \
  -m gpu -k "gathered" -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest (all three) exit $? at ${SECONDS} s"; tail -n 15 $L/pytest.txt | grep -E "passed|failed|FAILED|Error"
W="--special --labels ragged 1x --heads 128 --qlen 1 --page-size 1 100 --providers splitkv --rep-ms 10"
N="--special --labels ragged 1x --heads 12 --qlen 1 4 --page-size 1 100 --providers splitkv --rep-ms 10"
fits 40 base_w && bench base_w 50 $W
for v in r24 w4 w4r24; do fits 40 ${v}_w && PYTHONPATH=/tmp/$v/src bench ${v}_w 50 $W; done
fits 40 base_w2 && bench base_w2 50 $W
fits 50 base_n && bench base_n 60 $N
fits 50 w4_n && PYTHONPATH=/tmp/w4/src bench w4_n 60 $N
fits 50 ids_n && PYTHONPATH=/tmp/ids/src bench ids_n 60 $N
pack_logs
