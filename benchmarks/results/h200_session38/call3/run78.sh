# Session 38, call 3: the merge alone with one row a program, v0.2.41 against HEAD (.old_src),
# two rounds; then memcheck (with the new merge_rows cases) and the whole GPU suite.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
for r in 1 2; do
  PYTHONPATH=$PWD/.old_src/src STEP_OUT=$OUT/logs timeout 60 python3 run78_merge_r1.py old_r$r > $OUT/logs/r1_old_r$r.txt 2>&1; echo "old r$r exit $?"
  PYTHONPATH=$PWD/src STEP_OUT=$OUT/logs timeout 60 python3 run78_merge_r1.py new_r$r > $OUT/logs/r1_new_r$r.txt 2>&1; echo "new r$r exit $?"
done
export PYTHONPATH=$PWD/src
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 215 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" | tee -a $OUT/logs/memcheck.txt
tail -3 $OUT/logs/memcheck.txt
timeout 250 python3 -m pytest tests -n 12 -q -p no:cacheprovider > $OUT/logs/gpu_suite.txt 2>&1; echo "suite exit $?" | tee -a $OUT/logs/gpu_suite.txt
tail -3 $OUT/logs/gpu_suite.txt; grep -E "^FAILED|^ERROR" $OUT/logs/gpu_suite.txt | head -20
cd $OUT/logs && cat r1_*.txt > r1_all.txt && rm -f r1_old_r*.txt r1_new_r*.txt merge_r1_*.jsonl
