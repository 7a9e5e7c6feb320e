# Session 71: the whole GPU suite at GATHER_IDS_LEAD = 1 (the new default; run225 ran its
# memcheck subset and the gathered tests).
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
PYTHONPATH=$PWD/src:$PWD/tests:$PWD/benchmarks/results/h100_session55 timeout $((CALL_LIMIT - SECONDS)) python3 -m \
  pytest $(ls tests/test_*.py | sort -r) -n 10 -q -p report_failures -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 3 $L/pytest.txt
grep "^FAILED" $L/failures.txt 2>/dev/null | head -20
pack_logs
