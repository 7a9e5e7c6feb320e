# Session 47, call 3: v0.2.56's default (kv_pack 2 for gpt-oss at qlen 1 where the packed plan
# keeps the split decision) against v0.2.55's default on held-out batches: 51 seeded random
# batches whose plan changed (tools/gqa_random_batches.py .old_src/v55 --seed 471 --keys 1000
# 60000 and --seed 472 --keys 100 8000) with 3 unchanged controls, and 7 picked batches of
# 2-200 requests; each tree timed twice, alternating. Then issue 5's GQA special batches at
# gpt-oss qlen 1, and the whole GPU suite beside the memcheck.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
A="gpt-oss:1:8:2048-37532 gpt-oss:1:15:34418 gpt-oss:1:15:28155 gpt-oss:1:18:6186-57841 gpt-oss:1:22:3971-36478 gpt-oss:1:17:44585 gpt-oss:1:11:45219 gpt-oss:1:16:3112 gpt-oss:1:38:25678 gpt-oss:1:16:4728 gpt-oss:1:22:48858 gpt-oss:1:16:4488 gpt-oss:1:16:17234 gpt-oss:1:15:24492 gpt-oss:1:22:8900-35130 gpt-oss:1:34:18073 gpt-oss:1:21:56853 gpt-oss:1:35:4356-26142 gpt-oss:1:11:2224-18301 gpt-oss:1:38:1964-51209 gpt-oss:1:27:6107-20796 gpt-oss:1:30:3895-16216 gpt-oss:1:19:33485 gpt-oss:1:22:28119 gpt-oss:1:27:8782-47457 gpt-oss:1:10:6375-56648"
B="gpt-oss:1:11:324-5698 gpt-oss:1:13:3265 gpt-oss:1:16:5583 gpt-oss:1:34:1250-7188 gpt-oss:1:39:1154-3071 gpt-oss:1:22:4985 gpt-oss:1:22:5110 gpt-oss:1:13:1217-5035 gpt-oss:1:11:7358 gpt-oss:1:16:7351 gpt-oss:1:15:114-4440 gpt-oss:1:9:579-1760 gpt-oss:1:8:1971 gpt-oss:1:9:5542 gpt-oss:1:13:3812 gpt-oss:1:38:358 gpt-oss:1:37:220 gpt-oss:1:13:7861 gpt-oss:1:21:3476 gpt-oss:1:15:1226-7642 gpt-oss:1:19:519-3376 gpt-oss:1:17:6596 gpt-oss:1:11:2124 gpt-oss:1:13:4795 gpt-oss:1:10:934-6365 llama3-8b:2:37:409-1963 llama3-70b-tp8:4:132:352-3431 gpt-oss:1:27:1079-2629"
C="gpt-oss:1:200:3000 gpt-oss:1:160:1500 gpt-oss:1:72:100-9000 gpt-oss:1:180:100-3000 gpt-oss:1:140:2500 gpt-oss:1:4:65536 gpt-oss:1:2:131072"
for r in 1 2; do
  timeout 150 python3 .old_src/v55/tools/gqa_plan_ab.py --rounds 1 --out $OUT/logs/old_$r.jsonl --batch $A $B $C > $OUT/logs/old_$r.txt 2>&1; echo "old $r exit $?"
  timeout 150 python3 tools/gqa_plan_ab.py --rounds 1 --out $OUT/logs/new_$r.jsonl --batch $A $B $C > $OUT/logs/new_$r.txt 2>&1; echo "new $r exit $?"
done
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
print(f"geomean {math.exp(sum(logs)/len(logs)):.3f} over {len(logs)}; faster {sum(l < 0 for l in logs)}")
PY
export PYTHONPATH=$PWD/src:$PWD/tests
timeout 60 python3 -m splitkv bench --kind gqa --special --labels ragged 1x --models gpt-oss --qlen 1 --providers splitkv --out $OUT/logs/special.json > $OUT/logs/special.txt 2>&1; echo "special exit $?"
grep "p50" $OUT/logs/special.txt | cut -c1-140
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 8 $OUT/logs/pytest.txt
wait
tail -n 3 $OUT/logs/memcheck.txt
