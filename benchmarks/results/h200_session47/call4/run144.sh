# Session 47, call 4: held-out check of the one-split rounds rule (gqa_pack.one_split_rounds).
# 40 seeded random gpt-oss qlen 1 batches (40-256 requests x 200-8,000 keys, seed 473): the 18
# this tree packs, v0.2.55's default against this tree's (2 rounds a tree, alternating); the
# 22 one splits it leaves unpacked, the default against kv_pack=2 forced.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
P="gpt-oss:1:126:256 gpt-oss:1:84:3930 gpt-oss:1:112:231-7414 gpt-oss:1:75:7399 gpt-oss:1:239:7513 gpt-oss:1:97:2578 gpt-oss:1:248:2291 gpt-oss:1:231:991 gpt-oss:1:239:618 gpt-oss:1:214:746-4818 gpt-oss:1:218:5231 gpt-oss:1:119:123-1840 gpt-oss:1:77:3085 gpt-oss:1:85:546-7599 gpt-oss:1:79:4517 gpt-oss:1:235:4404 gpt-oss:1:237:6921 gpt-oss:1:172:1405-5144"
U="gpt-oss:1:135:6196 gpt-oss:1:254:404-7690 gpt-oss:1:190:254 gpt-oss:1:108:4907 gpt-oss:1:167:3267 gpt-oss:1:226:1152-6560 gpt-oss:1:100:2028 gpt-oss:1:195:4699 gpt-oss:1:140:4831 gpt-oss:1:135:1751 gpt-oss:1:139:4064 gpt-oss:1:179:5492 gpt-oss:1:223:902-1584 gpt-oss:1:138:4905 gpt-oss:1:182:1152-2380 gpt-oss:1:145:321 gpt-oss:1:190:6292 gpt-oss:1:165:3465 gpt-oss:1:154:3719 gpt-oss:1:185:1312 gpt-oss:1:160:7826 gpt-oss:1:168:1118"
for r in 1 2; do
  timeout 100 python3 .old_src/v55/tools/gqa_plan_ab.py --rounds 1 --out $OUT/logs/old_$r.jsonl --batch $P > $OUT/logs/old_$r.txt 2>&1; echo "old $r exit $?"
  timeout 100 python3 tools/gqa_plan_ab.py --rounds 1 --out $OUT/logs/new_$r.jsonl --batch $P > $OUT/logs/new_$r.txt 2>&1; echo "new $r exit $?"
done
timeout 200 python3 tools/gqa_plan_ab.py --rounds 2 --variant p2 kv_pack=2 --out $OUT/logs/declined.jsonl --batch $U > $OUT/logs/declined.txt 2>&1; echo "declined exit $?"
python3 - <<'PY'
import json, os, math
out = os.environ["OUT"] + "/logs/"
def load(name):
    rows = {}
    for r in (1, 2):
        for line in open(out + f"{name}_{r}.jsonl"):
            row = json.loads(line)
            rows.setdefault(row["batch"], []).extend(row["planned"])
            rows[row["batch"] + " plan"] = row["plan planned"]
    return rows
old, new = load("old"), load("new")
logs = []
for batch in [b for b in old if not b.endswith(" plan")]:
    a, b = min(old[batch]), min(new[batch])
    logs.append(math.log(b / a))
    print(f"{batch:30s} {a:8.1f} {b:8.1f} {100*(b/a-1):+6.1f}%  {old[batch+' plan']} -> {new[batch+' plan']}")
print(f"packed: geomean {math.exp(sum(logs)/len(logs)):.3f} over {len(logs)}; faster {sum(l < 0 for l in logs)}")
logs = []
for line in open(out + "declined.jsonl"):
    r = json.loads(line)
    a, b = min(r["planned"]), min(r["p2"])
    logs.append(math.log(b / a))
    print(f'{r["batch"]:30s} {a:8.1f} {b:8.1f} {100*(b/a-1):+6.1f}%  {r["plan planned"]} / {r["plan p2"]}')
print(f"declined, forced packed over default: geomean {math.exp(sum(logs)/len(logs)):.3f} over {len(logs)}; default faster or level {sum(l > -0.01 for l in logs)}")
PY
