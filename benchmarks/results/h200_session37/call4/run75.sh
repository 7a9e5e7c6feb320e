# Session 37, call 4: v0.2.40 (GQA one split writes the output) against its merged form, then
# the whole GPU suite and memcheck. Logs go into $OUT as they run.
set -o pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 100 python3 run75_one_split.py > $OUT/logs/one_split.txt 2>&1; echo "ab exit $?"
cut -c1-300 $OUT/logs/one_split.txt | tail -30
timeout 250 python3 -m pytest tests -n 12 -q -p no:cacheprovider > $OUT/logs/gpu_suite.txt 2>&1; echo "suite exit $?" | tee -a $OUT/logs/gpu_suite.txt
tail -4 $OUT/logs/gpu_suite.txt; grep -E "^FAILED|^ERROR" $OUT/logs/gpu_suite.txt | head -20
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 225 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" | tee -a $OUT/logs/memcheck.txt
tail -4 $OUT/logs/memcheck.txt
