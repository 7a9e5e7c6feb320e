# Session 66's first call (carry run219.sh and .peers; either GPU, the whole 580 s): on an H200
# first issue 5's standing at v0.2.77 (page 64, the bulk-copy kernels, unchanged since v0.2.75;
# the last H200 figures are session 34's), then session 65's run217 (the gathering producer's
# variants r24 / w4 / ids against this tree; predictions in docs/perf.md "Session 65:
# predictions for run217", the standing's in "Session 66: predictions for run219").
CALL_LIMIT=580
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
if grep -q H200 "$L/gpu_env.txt"; then
  fits 170 standing && bench standing 170 --rep-ms 20 --providers splitkv,triton-peer \
    --special --labels ragged 1x --heads 12 --qlen 1 2 4
fi
variant r24 r24; variant w4 w4; variant w4r24 r24 w4; variant ids ids; variant all r24 w4 ids
W="--special --labels ragged 1x --heads 128 --qlen 1 --page-size 1 100 --providers splitkv --rep-ms 10"
N="--special --labels ragged 1x --heads 12 --qlen 1 4 --page-size 1 100 --providers splitkv --rep-ms 10"
fits 40 base_w && bench base_w 50 $W
fits 40 r24_w && PYTHONPATH=/tmp/r24/src bench r24_w 50 $W
fits 40 w4r24_w && PYTHONPATH=/tmp/w4r24/src bench w4r24_w 50 $W
fits 50 base_n && bench base_n 60 $N
fits 50 ids_n && PYTHONPATH=/tmp/ids/src bench ids_n 60 $N
fits 40 w4_w && PYTHONPATH=/tmp/w4/src bench w4_w 50 $W
fits 40 base_w2 && bench base_w2 50 $W
fits 50 w4_n && PYTHONPATH=/tmp/w4/src bench w4_n 60 $N
fits 100 gathered_tests && PYTHONPATH=/tmp/all/src:$PWD/tests timeout 100 python3 -m pytest \
  tests/test_any_page_size.py -m gpu -k "gathered" -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest (all three) exit $? at ${SECONDS} s"; tail -n 15 $L/pytest.txt | grep -E "passed|failed|FAILED|Error"
pack_logs
