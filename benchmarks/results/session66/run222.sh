# Planned in session 66 for session 67 (carry run222.sh and .peers; either GPU, ~560 s): the page
# ids a block ahead beside four producer warps (w4ids) against the tree; then on an H200 issue
# 5's standing at v0.2.78 (page 64, unchanged kernels; predictions in docs/perf.md "Session 66:
# predictions for run219") and the gathered rows' first H200 timing (12 heads, pages 1 / 100
# against 64, qlen 1 / 2 / 4); then the tree again and the gathered GPU tests with w4ids.
# Predictions: docs/perf.md "Session 66: predictions for run222". Session 67 (no device) put
# w4ids first and took CALL_LIMIT from the command, so a call cut to the device time left
# (`CALL_LIMIT=400 bash run222.sh`) still times the A/B; each part runs only if it fits.
# Session 68 made the constant a lead in blocks (GATHER_IDS_LEAD: w4ids 1, w4ids2 2, the
# ids two blocks ahead) and added w4ids2 at 128 heads after w4ids. Session 69 put the H200
# standing first (issue 5's figures on its GPU are unmeasured since session 34), and on a
# short call (CALL_LIMIT under ~170) the qlen 4 standing alone in its place.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
src_variant w4ids gathered_keys.py 's/^GATHER_IDS_LEAD = gl.constexpr(0)/GATHER_IDS_LEAD = gl.constexpr(1)/'
src_variant w4ids2 gathered_keys.py 's/^GATHER_IDS_LEAD = gl.constexpr(0)/GATHER_IDS_LEAD = gl.constexpr(2)/'
W="--special --labels ragged 1x --heads 128 --qlen 1 --page-size 1 100 --providers splitkv --rep-ms 10"
N="--special --labels ragged 1x --heads 12 --qlen 4 --page-size 1 100 --providers splitkv --rep-ms 10"
if grep -q H200 "$L/gpu_env.txt"; then
  if fits 150 standing; then
    bench standing 160 --rep-ms 20 --providers splitkv,triton-peer \
      --special --labels ragged 1x --heads 12 --qlen 1 2 4
  elif fits 60 standing4; then  # a short call: the blocker (qlen 4) alone, no peer
    bench standing4 70 --rep-ms 20 --providers splitkv --special --labels ragged 1x \
      --heads 12 --qlen 4
  fi
fi
fits 40 base_w && bench base_w 50 $W
fits 40 w4ids_w && PYTHONPATH=/tmp/w4ids/src bench w4ids_w 50 $W
fits 40 w4ids2_w && PYTHONPATH=/tmp/w4ids2/src bench w4ids2_w 50 $W
fits 40 base_n && bench base_n 45 $N
fits 40 w4ids_n && PYTHONPATH=/tmp/w4ids/src bench w4ids_n 45 $N
if grep -q H200 "$L/gpu_env.txt"; then
  fits 90 pages && bench pages 100 --special --labels ragged 1x --heads 12 --qlen 1 2 4 \
    --page-size 1 100 64 --providers splitkv --rep-ms 10
fi
fits 40 base_w2 && bench base_w2 50 $W
fits 60 gathered_tests && PYTHONPATH=/tmp/w4ids/src:$PWD/tests timeout 60 python3 -m pytest \
  tests/test_any_page_size.py -m gpu -k "gathered" -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest (w4ids) exit $? at ${SECONDS} s"; tail -n 15 $L/pytest.txt | grep -E "passed|failed|FAILED|Error"
pack_logs
