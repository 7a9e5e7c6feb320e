# Session 43, call 7 ("Next runs (session 43)" items 1-2, data before any rule), v0.2.49's
# tree, 2 rounds: (a) ragged batches of short requests at several kv heads, the default
# (balanced or uniform on the fill rule's count) against one uniform split ("s1": each
# request its own program, on the long-split tile within its wave); (b) uniform 64-row
# batches past one wave of the one-split build, the default against one split.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
R="gpt-oss:8:32:100-1000 gpt-oss:8:16:100-2000 gpt-oss:8:48:100-500 qwen-64-8:8:16:300-1000 gpt-oss:4:32:100-1500 gpt-oss:8:12:500-2000 gpt-oss:8:64:100-2000 gpt-oss:8:24:200-800 qwen-64-8:8:32:100-600 qwen-64-8:8:12:200-1000 gpt-oss:4:20:300-1000 qwen-64-8:4:24:100-700 llama3-8b:8:32:100-600 llama3-8b:8:16:200-1000 gpt-oss:8:20:1000-2000 qwen-64-8:8:20:500-1000"
W="qwen-64-8:8:36:512 qwen-64-8:8:44:256 qwen-64-8:8:40:1024 qwen-64-8:8:48:384 gpt-oss:8:72:512 gpt-oss:8:80:1024 gpt-oss:8:96:256 gpt-oss:8:88:768"
timeout 150 python3 tools/gqa_plan_ab.py --rounds 2 --batch $R $W --variant s1 num_splits=1 --out $OUT/logs/s1.jsonl > $OUT/logs/s1.txt 2>&1; echo "s1 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/s1.jsonl --variants planned s1
cd $OUT && tar czf logs.tgz logs && rm -rf logs
