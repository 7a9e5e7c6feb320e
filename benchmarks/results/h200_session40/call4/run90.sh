# Session 40, call 4: v0.2.44's long-split residency at 32 rows and head dim 64 (2 an SM, as
# the build now compiles) against 3 (.old_src/v44t3): the plans it changes; then the whole
# GPU suite beside a full memcheck (the kernels' key addressing changed).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
B="gpt-oss:4:48:4000 gpt-oss:4:40:4000 gpt-oss:4:48:4096 gpt-oss:4:32:4096"
for tree in table3 table2 table3; do
  root=$PWD; [ $tree = table3 ] && root=$PWD/.old_src/v44t3
  timeout 60 python3 $root/tools/gqa_plan_ab.py --batch $B --rounds 1 --out $OUT/logs/residency_$tree.jsonl >> $OUT/logs/residency_$tree.txt 2>&1; echo "$tree exit $?"
  cut -c1-200 $OUT/logs/residency_$tree.jsonl
done
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 420 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 400 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest_gpu.txt 2>&1; echo "pytest exit $?"
tail -4 $OUT/logs/pytest_gpu.txt
wait
tail -4 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
