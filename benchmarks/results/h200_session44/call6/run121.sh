# Session 44, call 6: seeded random GQA batches whose plan v0.2.52 changes from v0.2.50 (and 4
# it leaves), each tree's default timed in its own run, 2 rounds.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
R="gpt-oss:2:15:510 gpt-oss:1:14:211-852 llama3-70b-tp8:2:156:176-577 qwen-64-8:1:22:342 llama3-70b-tp8:1:302:141-363 llama3-70b-tp8:8:172:125-345 llama3-8b:2:20:416 gpt-oss:1:33:309 gpt-oss:1:21:58-937 gpt-oss:2:15:745 gpt-oss:2:21:1428 gpt-oss:1:27:764 gpt-oss:2:14:1984 llama3-70b-tp8:8:205:451 gpt-oss:1:17:295 gpt-oss:1:19:180-423 gpt-oss:2:35:245 llama3-8b:4:31:380-746 qwen-64-8:2:29:229 gpt-oss:1:18:86-354 gpt-oss:2:15:1167 llama3-8b:2:40:395 llama3-70b-tp8:1:102:400 gpt-oss:1:20:717 qwen-64-8:1:24:576 llama3-8b:2:24:657 gpt-oss:1:24:758 llama3-70b-tp8:1:150:1286 llama3-8b:4:32:1435 qwen-64-8:1:29:751 qwen-64-8:1:30:2054"
timeout 120 python3 .old_src/v50/tools/gqa_plan_ab.py --rounds 2 --batch $R --out $OUT/logs/v50.jsonl > $OUT/logs/v50.txt 2>&1; echo "v50 exit $?"
timeout 120 python3 tools/gqa_plan_ab.py --rounds 2 --batch $R --out $OUT/logs/v52.jsonl > $OUT/logs/v52.txt 2>&1; echo "v52 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/v50.jsonl $OUT/logs/v52.jsonl --names v0.2.50 v0.2.52
cd $OUT && tar czf logs.tgz logs && rm -rf logs
