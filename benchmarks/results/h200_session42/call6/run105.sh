# Session 42, call 6: v0.2.47, one pinned 256-split plan at 32 and 64 keys, then the whole
# GPU suite beside the memcheck.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
timeout 25 python3 tools/gqa_plan_ab.py --rounds 2 --batch llama3-70b-tp8:4:1:32768 --variant k32 num_splits=256 block_n=32 --variant k64 num_splits=256 block_n=64 --out $OUT/logs/pinned.jsonl > $OUT/logs/pinned.txt 2>&1; echo "pinned exit $?"
cut -c1-300 $OUT/logs/pinned.txt
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -4 $OUT/logs/pytest.txt
wait
tail -3 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
