# Session 45, call 1: "Next runs (session 44)" item 2 (half long-split blocks on short one
# splits at 16 and 32 rows, and at head dim 128, where the last block is at most a quarter
# full; each default against the same plan on half blocks, 2 rounds), then item 0: the whole
# GPU suite beside the memcheck at v0.2.52 (the reworked GPU tests' first run).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
H64="gpt-oss:1:16:140 gpt-oss:1:24:150 gpt-oss:1:32:270 gpt-oss:1:14:400 gpt-oss:2:20:280 gpt-oss:2:40:135 gpt-oss:2:28:390 gpt-oss:4:16:140 gpt-oss:4:24:270 gpt-oss:4:30:150 gpt-oss:4:20:400 gpt-oss:1:20:180 gpt-oss:4:20:300"
H128="llama3-8b:1:20:140 llama3-8b:2:30:200 qwen-64-8:1:24:136 llama3-8b:8:16:140 qwen-64-8:4:20:75 qwen-64-8:8:16:140 llama3-70b-tp8:1:150:140 llama3-8b:1:24:200 qwen-64-8:2:16:70"
timeout 120 python3 tools/gqa_plan_ab.py --rounds 2 --batch $H64 --variant h64 block_n=64 --out $OUT/logs/half64.jsonl > $OUT/logs/half64.txt 2>&1; echo "half64 exit $?"
timeout 100 python3 tools/gqa_plan_ab.py --rounds 2 --batch $H128 --variant h32 block_n=32 --out $OUT/logs/half128.jsonl > $OUT/logs/half128.txt 2>&1; echo "half128 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/half64.jsonl --variants planned h64
python3 tools/gqa_ab_compare.py $OUT/logs/half128.jsonl --variants planned h32
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 12 $OUT/logs/pytest.txt
wait
tail -n 3 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
