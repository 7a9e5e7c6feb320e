# Session 43, call 8: v0.2.50 (the one-split rule on ragged lengths, by the longest request;
# 64 rows at head dim 128 up to 1.5 waves) against v0.2.49 (.old_src/v49), each tree's
# default, alternating trees, one round each twice (4 runs); held-out batches.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
B="gpt-oss:8:40:100-800 gpt-oss:8:20:50-2000 gpt-oss:8:56:200-600 gpt-oss:8:16:1-2000 qwen-64-8:8:20:100-1000 qwen-64-8:8:40:200-500 qwen-64-8:8:14:100-1000 gpt-oss:4:32:100-700 gpt-oss:4:16:100-1500"
B="$B qwen-64-8:8:38:640 qwen-64-8:8:46:300 qwen-64-8:8:42:900 qwen-64-8:8:49:512 gpt-oss:4:48:300-1500 llama3-8b:8:40:100-400"
for r in 1 2; do
  for tree in v49 v50; do
    root=$PWD; [ $tree = v49 ] && root=$PWD/.old_src/v49
    timeout 70 python3 $root/tools/gqa_plan_ab.py --rounds 1 --batch $B --out $OUT/logs/ab_${tree}_$r.jsonl > $OUT/logs/ab_${tree}_$r.txt 2>&1; echo "$tree $r exit $?"
  done
done
python3 - <<'PY'
import json, os
logs = os.environ["OUT"] + "/logs"
def load(t):
    rows = {}
    for r in (1, 2):
        for l in open(f"{logs}/ab_{t}_{r}.jsonl"):
            j = json.loads(l)
            rows.setdefault(j["batch"], {"t": [], "plan": j["plan planned"]})["t"] += j["planned"]
    return rows
old, new = load("v49"), load("v50")
for b, o in old.items():
    n = new[b]
    to, tn = min(o["t"]), min(n["t"])
    same = "" if o["plan"] == n["plan"] else f"  {o['plan']} -> {n['plan']}"
    print(f"{b:28s} v0.2.49 {to:7.1f} v0.2.50 {tn:7.1f} {100 * (tn / to - 1):+6.1f}%  rounds {o['t']} {n['t']}{same}")
PY
cd $OUT && tar czf logs.tgz logs && rm -rf logs
