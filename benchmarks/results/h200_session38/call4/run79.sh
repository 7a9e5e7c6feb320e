# Session 38, call 4 (the device time left, ~240 s): the merge_rows cases under memcheck, the
# GPU tests of the files this session changed.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 80 compute-sanitizer --tool memcheck --error-exitcode 9 python3 run79_memcheck_rows.py > $OUT/logs/memcheck_rows.txt 2>&1; echo "memcheck exit $?" | tee -a $OUT/logs/memcheck_rows.txt
tail -4 $OUT/logs/memcheck_rows.txt
timeout 110 python3 -m pytest tests/test_gqa_decode.py tests/test_balanced_schedule.py tests/test_planner.py tests/test_gqa_gpu.py tests/test_one_split_output.py -n 12 -q -p no:cacheprovider > $OUT/logs/gpu_tests.txt 2>&1; echo "tests exit $?" | tee -a $OUT/logs/gpu_tests.txt
tail -2 $OUT/logs/gpu_tests.txt; grep -E "^FAILED|^ERROR" $OUT/logs/gpu_tests.txt | head
