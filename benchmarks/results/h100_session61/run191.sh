# Session 61, the second call on run190's warm machine (carry run191.sh): the new GPU tests
# again (run190's six failures were the tests' own lengths under qlen), then memcheck with the
# odd page sizes added to tests/gpu_memcheck.py.
CALL_LIMIT=580
source tools/device_call.sh
timeout 150 python3 -m pytest tests/test_any_page_size.py -n 8 -q -p no:cacheprovider \
  > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 2 $L/pytest.txt; grep -E "^FAILED" $L/pytest.txt | head
memcheck 400
pack_logs
