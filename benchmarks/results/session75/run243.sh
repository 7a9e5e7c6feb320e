# Session 75's fourth call (carry run243.sh; either GPU). On an H200 first issue 5's standing
# (`issue5_on_h200`). Then the merge sized by partials' program times (new this session):
# tools/kernel_timeline.py --merge-stamps on the one-long batch at qlen 4 (the default plan),
# and the whole GPU suite at v0.2.81 (the default merge sized by partials reaches every
# balanced MLA plan of more requests than its long slots), less the two files run242 ran
# (test_mla_gpu, test_balanced_schedule), in reverse order as session 66's run221, failures
# listed by report_failures (benchmarks/results/h100_session55/).
CALL_LIMIT=${CALL_LIMIT:-560}
source tools/device_call.sh
issue5_on_h200
fits 120 timeline && timeout 90 python3 tools/kernel_timeline.py --shape one-long --qlen 4 \
  --merge-stamps --out "$L/timeline" > "$L/timeline.txt" 2>&1
echo "timeline exit $? at ${SECONDS} s"; grep -m3 "merge" "$L/timeline.txt" | cut -c1-400
FILES=$(ls tests/test_*.py | sort -r | grep -v -e test_mla_gpu.py -e test_balanced_schedule)
PYTHONPATH=$PWD/src:$PWD/tests:$PWD/benchmarks/results/h100_session55 timeout $((CALL_LIMIT - SECONDS)) python3 -m \
  pytest $FILES -n 12 -q -p report_failures -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 3 $L/pytest.txt
grep "^FAILED" $L/failures.txt 2>/dev/null | head -20
pack_logs
