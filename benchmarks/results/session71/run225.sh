# Session 71: GATHER_IDS_LEAD = 1 as the default (run222's winner on the H100); its gathered
# GPU tests and memcheck, and the 128-head page 1 / 100 rows again beside lead 0 (lead0).
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
src_variant lead0 gathered_keys.py 's/^GATHER_IDS_LEAD = gl.constexpr(1)/GATHER_IDS_LEAD = gl.constexpr(0)/'
W="--special --labels ragged 1x --heads 128 --qlen 1 --page-size 1 100 --providers splitkv --rep-ms 10"
fits 40 lead1_w && bench lead1_w 50 $W
fits 40 lead0_w && PYTHONPATH=/tmp/lead0/src bench lead0_w 50 $W
fits 40 lead1_w2 && bench lead1_w2 50 $W
fits 60 gathered_tests && PYTHONPATH=$PWD/tests timeout 60 python3 -m pytest \
  tests/test_any_page_size.py -m gpu -k "gathered" -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 15 $L/pytest.txt | grep -E "passed|failed|FAILED|Error"
fits 250 memcheck && memcheck $((CALL_LIMIT - SECONDS - 20))
pack_logs
