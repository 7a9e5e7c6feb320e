# Session 44, call 3: (a) the half blocks of a short one split at 16 and 32 rows (gpt-oss), the
# plan against 64-key blocks; (b) the whole GPU suite beside the memcheck at v0.2.51.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
B="gpt-oss:1:20:310 gpt-oss:2:26:300 gpt-oss:1:30:300 gpt-oss:2:20:140 gpt-oss:1:24:320 gpt-oss:4:18:300 gpt-oss:4:28:320 gpt-oss:4:20:150"
timeout 90 python3 tools/gqa_plan_ab.py --rounds 2 --batch $B --variant b64 block_n=64 --out $OUT/logs/half.jsonl > $OUT/logs/half.txt 2>&1; echo "half exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/half.jsonl --variants planned b64
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 4 $OUT/logs/pytest.txt
wait
tail -n 3 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
