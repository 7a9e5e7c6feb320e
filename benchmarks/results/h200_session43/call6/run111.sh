# Session 43, call 6: v0.2.49 as landed on held-out batches: v0.2.48's tree (.old_src/v48),
# its default ("planned") against one split on the long-split tile ("L": v0.2.49's plan where
# it changes one, checked against the new tree's --plans-only), 2 rounds.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
G="gpt-oss:8:12:256 gpt-oss:8:24:512 gpt-oss:8:32:768 gpt-oss:8:20:512 gpt-oss:8:28:640 gpt-oss:8:18:700 gpt-oss:8:22:400 gpt-oss:4:12:1024 gpt-oss:4:12:768 gpt-oss:4:11:768 gpt-oss:4:26:600 gpt-oss:4:18:400"
Q="qwen-64-8:8:24:256 qwen-64-8:8:20:384 qwen-64-8:8:30:300 qwen-64-8:8:16:256 qwen-64-8:4:14:512 qwen-64-8:4:18:300 llama3-8b:8:12:512 llama3-8b:8:13:400 llama3-8b:8:11:600"
python3 tools/gqa_plan_ab.py --plans-only --batch $G $Q > $OUT/logs/plans_v49.txt 2>&1
timeout 120 python3 .old_src/v48/tools/gqa_plan_ab.py --rounds 2 --batch $G --variant L num_splits=1 block_n=128 split_num_stages=3 page_prefetch=True --out $OUT/logs/ab_hd64.jsonl > $OUT/logs/ab_hd64.txt 2>&1; echo "hd64 exit $?"
timeout 100 python3 .old_src/v48/tools/gqa_plan_ab.py --rounds 2 --batch $Q --variant L num_splits=1 block_n=64 split_num_stages=3 page_prefetch=True --out $OUT/logs/ab_hd128.jsonl > $OUT/logs/ab_hd128.txt 2>&1; echo "hd128 exit $?"
cat $OUT/logs/ab_hd64.jsonl $OUT/logs/ab_hd128.jsonl > $OUT/logs/ab.jsonl
python3 tools/gqa_ab_compare.py $OUT/logs/ab.jsonl --variants planned L > $OUT/logs/ab_compare.txt; cat $OUT/logs/ab_compare.txt
python3 - <<'PY'
import json, os
logs = os.environ["OUT"] + "/logs"
new = {json.loads(l)["batch"]: json.loads(l)["plan planned"] for l in open(f"{logs}/plans_v49.txt") if l.startswith("{")}
for l in open(f"{logs}/ab.jsonl"):
    r = json.loads(l)
    v49 = new[r["batch"]]
    side = "L" if v49 == r["plan L"] else "planned" if v49 == r["plan planned"] else "neither"
    print(f"{r['batch']:28s} v0.2.49 plan = {side}")
PY
cd $OUT && tar czf logs.tgz logs && rm -rf logs
