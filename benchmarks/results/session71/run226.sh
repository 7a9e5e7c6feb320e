# Session 71: lead 1 (the new default) against lead 0, interleaved three rounds at 128 heads
# (pages 1 and 100), since run222 and run225 each moved 7-10% between a call's first and later
# benches; then 12 heads x qlen 1 / 4 at page 1 both ways, then the page-size GPU tests.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
src_variant lead0 gathered_keys.py 's/^GATHER_IDS_LEAD = gl.constexpr(1)/GATHER_IDS_LEAD = gl.constexpr(0)/'
W="--special --labels ragged 1x --heads 128 --qlen 1 --page-size 1 100 --providers splitkv --rep-ms 10"
N="--special --labels ragged 1x --heads 12 --qlen 1 4 --page-size 1 --providers splitkv --rep-ms 10"
for r in 1 2 3; do
  fits 30 lead0_w$r && PYTHONPATH=/tmp/lead0/src bench lead0_w$r 40 $W
  fits 30 lead1_w$r && bench lead1_w$r 40 $W
done
fits 40 lead0_n && PYTHONPATH=/tmp/lead0/src bench lead0_n 50 $N
fits 40 lead1_n && bench lead1_n 50 $N
fits 120 page_tests && PYTHONPATH=$PWD/tests timeout $((CALL_LIMIT - SECONDS - 20)) python3 -m pytest \
  tests/test_any_page_size.py -m gpu -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 15 $L/pytest.txt | grep -E "passed|failed|FAILED|Error"
pack_logs
