# Session 36, call 4 (v0.2.38): the planner's and GQA GPU tests with the one-kv-head schedule
# model rule (the whole suite does not fit the session's remaining device time).
set -o pipefail
mkdir -p $OUT/logs
timeout 200 python3 -m pytest tests/test_planner.py tests/test_gqa_gpu.py tests/test_plan_replay.py tests/test_balanced_schedule.py tests/test_shared_prefix_gqa.py -n 12 -q -p no:cacheprovider > $OUT/logs/gpu_tests.txt 2>&1; echo "tests exit $?" | tee -a $OUT/logs/gpu_tests.txt
tail -4 $OUT/logs/gpu_tests.txt
