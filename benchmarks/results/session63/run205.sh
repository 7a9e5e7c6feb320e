# Session 63's third call (carry run205.sh, ab_base and .peers; asks for an H200, ~500 s).
# Predictions: docs/perf.md "Session 63: predictions for run205". (1) GPU tests of odd pages
# and the planner; (2) the final v0.2.75 default against v0.2.74 (ab_base) at qlen 2 (the
# 32-row balanced tile, now two chains without the look-ahead on 64-key blocks) and qlen 1,
# pages 100 / 48 / 4; then on an H200 issue 5's standing (run203's first half), on an H100 the
# memcheck subset (odd pages on the new default).
source tools/device_call.sh
PYTHONPATH=$PWD/src:$PWD/tests timeout 150 python3 -m pytest tests/test_any_page_size.py \
  tests/test_planner.py -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 1 $L/pytest.txt
Q="--special --labels ragged 1x --heads 12 16 --qlen 2 1 --page-size 100 48 4 \
  --no-warp-specialized --providers splitkv --rep-ms 15"
fits 70 new && bench new 80 $Q
fits 70 old && PYTHONPATH=$PWD/ab_base/src bench old 80 $Q
if grep -q H200 "$L/gpu_env.txt"; then
  fits 150 standing && bench standing 160 --rep-ms 20 --providers splitkv,triton-peer --special \
    --labels ragged 1x --heads 12 --qlen 1 2 4
  fits 90 cascade && bench cascade 100 --rep-ms 20 --providers splitkv,splitkv-prefix \
    --special --labels 8x327600 48 --heads 12 --qlen 1
else
  fits 200 memcheck && memcheck 300
fi
pack_logs
