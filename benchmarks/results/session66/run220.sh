# Session 66's second call (carry run220.sh; the same H100 lease as run219): GATHER_WARPS 4 as
# the default (run219's winner), the memcheck subset on it, then the GPU suite in what is left.
CALL_LIMIT=575
source tools/device_call.sh
memcheck 330
PYTHONPATH=$PWD/src:$PWD/tests:$PWD/benchmarks/results/h100_session55 timeout $((CALL_LIMIT - SECONDS)) python3 -m \
  pytest tests -n 10 -q -p report_failures -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 3 $L/pytest.txt
grep "^FAILED" $L/failures.txt 2>/dev/null | head -20
pack_logs
