# Session 66's third call (carry run221.sh; the same H100 lease, warm compile cache): the memcheck
# subset at GATHER_WARPS 4 (run220's ran out of its 330 s compiling), then the GPU suite's
# files in reverse order (run220's pytest reached 78% with no failure before its cut).
CALL_LIMIT=395
source tools/device_call.sh
memcheck 240
PYTHONPATH=$PWD/src:$PWD/tests:$PWD/benchmarks/results/h100_session55 timeout $((CALL_LIMIT - SECONDS)) python3 -m \
  pytest $(ls tests/test_*.py | sort -r) -n 10 -q -p report_failures -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 3 $L/pytest.txt
grep "^FAILED" $L/failures.txt 2>/dev/null | head -20
pack_logs
