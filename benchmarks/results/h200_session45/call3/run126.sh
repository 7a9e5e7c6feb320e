# Session 45, call 3: v0.2.54's thin launches held out (v0.2.53's tree, .old_src/v53, and this
# tree, each its own default, 2 rounds), fitting data for 32 rows at head dim 128, then the
# whole GPU suite beside the memcheck at v0.2.54.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
HO="gpt-oss:1:10:600 gpt-oss:1:11:900 gpt-oss:2:10:700 gpt-oss:1:11:200-1000 llama3-8b:1:11:400 llama3-8b:2:10:300 qwen-64-8:2:11:450 llama3-70b-tp8:1:84:300 llama3-70b-tp8:2:90:450 llama3-70b-tp8:1:82:100-500 llama3-8b:4:11:350 gpt-oss:1:12:1300 gpt-oss:1:12:1800 llama3-8b:1:12:700 qwen-64-8:2:12:640 llama3-70b-tp8:1:94:600 llama3-70b-tp8:2:98:700 gpt-oss:4:10:600 gpt-oss:4:11:700 gpt-oss:4:10:300-750 gpt-oss:4:11:640"
timeout 80 python3 .old_src/v53/tools/gqa_plan_ab.py --rounds 2 --batch $HO --out $OUT/logs/v53.jsonl > $OUT/logs/v53.txt 2>&1; echo "v53 exit $?"
timeout 80 python3 tools/gqa_plan_ab.py --rounds 2 --batch $HO --out $OUT/logs/v54.jsonl > $OUT/logs/v54.txt 2>&1; echo "v54 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/v53.jsonl $OUT/logs/v54.jsonl --names v53 v54
F="llama3-8b:8:10:256 llama3-8b:8:11:384 llama3-8b:8:10:512 llama3-8b:8:11:200-380 qwen-64-8:4:10:256 qwen-64-8:4:11:384 qwen-64-8:4:11:512 qwen-64-8:4:10:320"
timeout 60 python3 tools/gqa_plan_ab.py --rounds 2 --batch $F --variant s1 num_splits=1 block_n=64 split_num_stages=3 page_prefetch=True --out $OUT/logs/thin32.jsonl > $OUT/logs/thin32.txt 2>&1; echo "thin32 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/thin32.jsonl --variants planned s1
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 8 $OUT/logs/pytest.txt
wait
tail -n 3 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
