# Session 46, call 6: 16-row uniform GQA builds at head dim 128 with several splits (and gpt-oss
# as a control), v0.2.54 (.old_src/v54) and this tree alternating twice; llama3-70b-tp8's plain
# 8 x 131,072 sharing batch twice a tree.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
B="llama3-70b-tp8:1:8:131072 llama3-70b-tp8:1:4:32768 llama3-70b-tp8:2:16:16384 llama3-8b:1:8:32768 llama3-8b:1:4:131072 llama3-8b:2:8:16384 qwen-64-8:1:8:32768 qwen-64-8:2:4:65536 llama3-8b:4:22:1356 llama3-8b:4:15:1284 llama3-70b-tp8:1:32:8192 llama3-8b:1:32:4096 gpt-oss:1:8:32768"
for round in 1 2; do
  timeout 60 python3 .old_src/v54/tools/gqa_plan_ab.py --rounds 1 --batch $B --out $OUT/logs/v54_$round.jsonl > $OUT/logs/v54_$round.txt 2>&1; echo "v54 $round exit $?"
  timeout 60 python3 tools/gqa_plan_ab.py --rounds 1 --batch $B --out $OUT/logs/v55_$round.jsonl --builds $OUT/logs/builds_v55_$round.jsonl > $OUT/logs/v55_$round.txt 2>&1; echo "v55 $round exit $?"
done
python3 tools/gqa_ab_compare.py $OUT/logs/v54_1.jsonl $OUT/logs/v55_1.jsonl --names v54 v55
python3 tools/gqa_ab_compare.py $OUT/logs/v54_2.jsonl $OUT/logs/v55_2.jsonl --names v54 v55
for round in 1 2; do for tree in v54 v55; do
  root=.old_src/$tree; [ $tree = v55 ] && root=.
  PYTHONPATH=$root/src timeout 40 python3 -m splitkv bench --kind gqa --special --labels 8x131072 --models llama3-70b-tp8 --providers splitkv --out $OUT/logs/prefix_${tree}_$round.json > $OUT/logs/prefix_${tree}_$round.txt 2>&1; echo "prefix $tree $round exit $?"
  grep "p50" $OUT/logs/prefix_${tree}_$round.txt | cut -c1-110
done; done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
