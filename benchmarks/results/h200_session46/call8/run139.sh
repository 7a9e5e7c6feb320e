# Session 46, call 8: thin one-split launches at 32 rows and head dim 128, v0.2.54
# (.old_src/v54) and v0.2.55 alternating twice (plans identical; the builds differ in the
# shared value offsets only).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
B="qwen-64-8:4:12:600 qwen-64-8:4:16:400 qwen-64-8:4:18:91-592 qwen-64-8:4:20:800 llama3-8b:8:12:500 llama3-8b:8:20:600 llama3-8b:8:24:400 qwen-64-8:4:22:1000 qwen-64-8:4:26:700 llama3-8b:8:28:100-1000 llama3-70b-tp8:4:120:500"
for round in 1 2; do
  timeout 50 python3 .old_src/v54/tools/gqa_plan_ab.py --rounds 1 --batch $B --out $OUT/logs/v54_$round.jsonl > $OUT/logs/v54_$round.txt 2>&1; echo "v54 $round exit $?"
  timeout 50 python3 tools/gqa_plan_ab.py --rounds 1 --batch $B --out $OUT/logs/v55_$round.jsonl --builds $OUT/logs/builds_v55_$round.jsonl > $OUT/logs/v55_$round.txt 2>&1; echo "v55 $round exit $?"
done
python3 tools/gqa_ab_compare.py $OUT/logs/v54_1.jsonl $OUT/logs/v55_1.jsonl --names v54 v55
python3 tools/gqa_ab_compare.py $OUT/logs/v54_2.jsonl $OUT/logs/v55_2.jsonl --names v54 v55
cd $OUT && tar czf logs.tgz logs && rm -rf logs
