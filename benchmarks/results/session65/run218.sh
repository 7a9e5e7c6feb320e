# Planned in session 65 for session 66 (carry run218.sh; either GPU, the whole 600 s): the GPU
# suite at v0.2.77, whose default plans now gather key rows at pages 1, 2, 4, 12, 100 (tests
# at page 1 across the suite take them: the pool past 2^31 elements, the shared-prefix
# cascade, the balanced schedule), each failure logged as it happens. Expected: every case
# passes (the gathered rows' own 16 cases and memcheck passed in run212b / run215).
source tools/device_call.sh
PYTHONPATH=$PWD/src:$PWD/tests:$PWD/benchmarks/results/h100_session55 timeout 560 python3 -m \
  pytest tests -n 10 -q -p report_failures -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 3 $L/pytest.txt
grep "^FAILED" $L/failures.txt 2>/dev/null | head -20
pack_logs
