# Session 44, call 2: v0.2.51's plans held out. Timed in v0.2.50's tree (.old_src/v50), each
# batch's new plan as a variant (N1: one split on 128-key long-split blocks; N2: on 64-key
# ones), checked by tools/gqa_ab_compare.py --plans against this tree's --plans-only; then the
# whole GPU suite beside the memcheck at v0.2.51.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
H1="gpt-oss:1:13:1024 gpt-oss:1:14:2048 gpt-oss:1:20:1536 gpt-oss:1:28:640 gpt-oss:1:18:900 gpt-oss:1:12:700 gpt-oss:2:20:1024 gpt-oss:1:40:200 gpt-oss:1:48:256 gpt-oss:1:24:100-1500 gpt-oss:2:30:50-800 gpt-oss:1:10:1024 gpt-oss:1:16:2100 gpt-oss:8:16:200 gpt-oss:4:16:256"
H2="gpt-oss:2:26:300 gpt-oss:8:14:300 gpt-oss:8:26:330 gpt-oss:8:40:280 gpt-oss:4:20:300 gpt-oss:4:24:140 gpt-oss:1:20:310 llama3-8b:1:14:1024 llama3-8b:1:20:768 llama3-8b:1:28:400 llama3-8b:1:12:500 llama3-8b:4:20:1024 llama3-8b:4:13:900 qwen-64-8:1:18:1024 qwen-64-8:1:30:256 qwen-64-8:2:22:600 qwen-64-8:2:13:1024 llama3-8b:1:20:100-1000 qwen-64-8:2:16:200-1024 llama3-8b:1:16:1100"
N1="num_splits=1 block_n=128 split_num_stages=3 page_prefetch=True"
N2="num_splits=1 block_n=64 split_num_stages=3 page_prefetch=True"
python3 tools/gqa_plan_ab.py --plans-only --batch $H1 > $OUT/logs/plans_new1.txt 2>/dev/null
python3 tools/gqa_plan_ab.py --plans-only --batch $H2 > $OUT/logs/plans_new2.txt 2>/dev/null
timeout 130 python3 .old_src/v50/tools/gqa_plan_ab.py --rounds 2 --batch $H1 --variant N1 $N1 --out $OUT/logs/h1.jsonl > $OUT/logs/h1.txt 2>&1; echo "h1 exit $?"
timeout 170 python3 .old_src/v50/tools/gqa_plan_ab.py --rounds 2 --batch $H2 --variant N2 $N2 --out $OUT/logs/h2.jsonl > $OUT/logs/h2.txt 2>&1; echo "h2 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/h1.jsonl --variants planned N1 --plans $OUT/logs/plans_new1.txt
python3 tools/gqa_ab_compare.py $OUT/logs/h2.jsonl --variants planned N2 --plans $OUT/logs/plans_new2.txt
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 280 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 280 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 4 $OUT/logs/pytest.txt
wait
tail -n 3 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
