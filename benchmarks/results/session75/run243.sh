# Session 75's fourth call (carry run243.sh; either GPU): the whole GPU suite at v0.2.81 (the
# default merge sized by partials reaches every balanced MLA plan of more requests than its
# long slots), less the three files run242 ran (180 passed), in reverse order as session 66's
# run221, failures listed by report_failures (benchmarks/results/h100_session55/). On an H200
# first issue 5's standing (`issue5_on_h200`).
CALL_LIMIT=${CALL_LIMIT:-560}
source tools/device_call.sh
issue5_on_h200
FILES=$(ls tests/test_*.py | sort -r | grep -v -e test_merge_by_length -e test_mla_gpu.py -e test_balanced_schedule)
PYTHONPATH=$PWD/src:$PWD/tests:$PWD/benchmarks/results/h100_session55 timeout $((CALL_LIMIT - SECONDS)) python3 -m \
  pytest $FILES -n 12 -q -p report_failures -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 3 $L/pytest.txt
grep "^FAILED" $L/failures.txt 2>/dev/null | head -20
pack_logs
