# Session 78, the second call on run250's warm H100 (carry .peers; ~80 s), typed as the
# device tool's command: the GPU tests of the planner's files at v0.2.83 (HostLengths), then
# a second round of issue 5's standing (splitkv alone).
source tools/device_call.sh; PYTHONPATH=$PWD/src:$PWD/tests timeout 200 python3 -m pytest tests/test_host_lengths.py tests/test_planner.py tests/test_plan_memo.py tests/test_balanced_schedule.py tests/test_shared_prefix.py -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1; echo "pytest exit $? at ${SECONDS} s"; tail -n 2 $L/pytest.txt; fits 60 standing2 && bench standing2 70 --rep-ms 20 --providers splitkv --special --labels ragged 1x --heads 12 --qlen 1 2 4; pack_logs
