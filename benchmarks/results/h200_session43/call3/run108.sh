# Session 43, call 3: v0.2.48 as it lands (64 rows; under a program an SM only on the
# long-split tile or 4 blocks at most) on held-out batches: v0.2.47's tree (.old_src/v47),
# its default ("planned") against one split ("s1", v0.2.48's plan where the rule fires;
# checked against the new tree's --plans-only), 2 rounds.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
HELD="gpt-oss:8:13:256 gpt-oss:8:15:1200 gpt-oss:8:12:1800 gpt-oss:8:28:640 gpt-oss:8:18:700 gpt-oss:8:44:900 qwen-64-8:8:13:512 qwen-64-8:8:12:900 qwen-64-8:8:20:384 qwen-64-8:8:30:300 qwen-64-8:8:26:700"
CTRL="gpt-oss:8:11:640 gpt-oss:8:12:900 qwen-64-8:8:11:300 gpt-oss:8:16:300"
python3 tools/gqa_plan_ab.py --plans-only --batch $HELD $CTRL > $OUT/logs/plans_v48.txt 2>&1
timeout 150 python3 .old_src/v47/tools/gqa_plan_ab.py --rounds 2 --batch $HELD $CTRL --variant s1 num_splits=1 --out $OUT/logs/ab.jsonl > $OUT/logs/ab.txt 2>&1; echo "ab exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/ab.jsonl --variants planned s1 > $OUT/logs/ab_compare.txt; cat $OUT/logs/ab_compare.txt
python3 - <<'PY'
import json, os
logs = os.environ["OUT"] + "/logs"
new = {json.loads(l)["batch"]: json.loads(l)["plan planned"] for l in open(f"{logs}/plans_v48.txt") if l.startswith("{")}
for l in open(f"{logs}/ab.jsonl"):
    r = json.loads(l)
    v48 = new[r["batch"]]
    side = "s1" if v48 == r["plan s1"] else "planned" if v48 == r["plan planned"] else "neither"
    print(f"{r['batch']:28s} v0.2.48 plan = {side}")
PY
cd $OUT && tar czf logs.tgz logs && rm -rf logs
