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
variant() {  # variant NAME [r24] [w4] [ids]: a copy of src/ at /tmp/NAME/src with the edits
  rm -rf "/tmp/$1" && mkdir -p "/tmp/$1" && cp -r src "/tmp/$1/src"
  local k=/tmp/$1/src/splitkv/kernels
  case "$*" in *r24*) sed -i 's/\[232, PRODUCER_REGS\]/[232, COPY_PRODUCER_REGS]/' \
    "$k/mla_warp_specialized.py" "$k/mla_warp_specialized_loop.py" ;; esac
  case "$*" in *w4*) sed -i 's/^GATHER_WARPS = gl.constexpr(1)/GATHER_WARPS = gl.constexpr(4)/' \
    "$k/gathered_keys.py" ;; esac
  case "$*" in *ids*) sed -i 's/^GATHER_IDS_AHEAD = gl.constexpr(False)/GATHER_IDS_AHEAD = gl.constexpr(True)/' \
    "$k/gathered_keys.py" ;; esac
  grep -c "COPY_PRODUCER_REGS\]" "$k/mla_warp_specialized.py" "$k/mla_warp_specialized_loop.py"
  grep "^GATHER_WARPS\|^GATHER_IDS_AHEAD" "$k/gathered_keys.py"
}
variant r24 r24; variant w4 w4; variant w4r24 r24 w4; variant ids ids; variant all r24 w4 ids
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
