# Session 40, call 5: gpt-oss at qlen 4, 32-56 requests of 2k-4k keys, where the long-split tile
# (2 an SM as v0.2.44 compiles) does not fit one wave: the planner's 2 uniform splits against one
# split on the one-split build (`num_splits=1`, the output written by stage 1).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
timeout 120 python3 tools/gqa_plan_ab.py --batch gpt-oss:4:32:4000 gpt-oss:4:40:4000 gpt-oss:4:48:4000 gpt-oss:4:56:4000 gpt-oss:4:40:2048 gpt-oss:4:48:2048 qwen-64-8:4:40:4000 qwen-64-8:4:48:4000 --variant "one split" num_splits=1 --out $OUT/logs/one_split.jsonl > $OUT/logs/one_split.txt 2>&1; echo "exit $?"
cut -c1-260 $OUT/logs/one_split.jsonl
