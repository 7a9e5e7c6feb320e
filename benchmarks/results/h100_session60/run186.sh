# Session 60's fourth call, as it ran (inline, warm H100): the GPU suite's files that v0.2.71
# touches, at v0.2.71 (the device time left allowed no 510 s call of the whole suite).
source tools/device_call.sh; PYTHONPATH=$PWD/src:$PWD/tests timeout 320 python3 -m pytest tests/test_warp_specialized.py tests/test_balanced_schedule.py tests/test_planner.py tests/test_bench_report.py -n 10 -q -p no:cacheprovider > $L/pytest.txt 2>&1; echo "pytest exit $? at ${SECONDS} s"; tail -n 3 $L/pytest.txt; grep "^FAILED" $L/pytest.txt | head; pack_logs
