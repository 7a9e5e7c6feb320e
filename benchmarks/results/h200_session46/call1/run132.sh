# Session 46, call 1: the value rows at the key rows' offsets (KV_SAME_STRIDES), the kernel
# alone: v0.2.54 (.old_src/v54) against v55a (.old_src/v55a: this kernel, the old residency
# table) on the special ragged / one-long GQA batches at qlen 1, 4, 8 (balanced; plans
# identical); then one split at 32 rows on 2 stages against 3 (this tree).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
for tree in v54 v55a; do
  PYTHONPATH=.old_src/$tree/src timeout 150 python3 -m splitkv bench --kind gqa --special --labels ragged 1x --models llama3-8b gpt-oss qwen-64-8 llama3-70b-tp8 --qlen 1 4 8 --providers splitkv --rep-ms 50 --out $OUT/logs/special_$tree.json > $OUT/logs/special_$tree.txt 2>&1; echo "special $tree exit $?"
done
tail -n 26 $OUT/logs/special_v54.txt | cut -c1-170
tail -n 26 $OUT/logs/special_v55a.txt | cut -c1-170
S="llama3-8b:8:64:4096 qwen-64-8:4:64:2048 llama3-8b:8:32:4096 qwen-64-8:4:40:3000"
timeout 70 python3 tools/gqa_plan_ab.py --rounds 2 --batch $S --variant "2 stages" split_num_stages=2 --out $OUT/logs/stages.jsonl --builds $OUT/logs/builds_stages.jsonl > $OUT/logs/stages.txt 2>&1; echo "stages exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/stages.jsonl --variants planned "2 stages"
cd $OUT && tar czf logs.tgz logs && rm -rf logs
