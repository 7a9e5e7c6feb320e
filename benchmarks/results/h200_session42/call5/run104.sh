# Session 42, call 5: 32- against 64-key blocks on uniform splits of 128-190 keys, and 64
# against 128 on 256-key splits (2 blocks a split where the wider block adds no wave).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
A="llama3-70b-tp8:4:1:500 llama3-70b-tp8:4:2:2500 llama3-70b-tp8:4:16:700 llama3-70b-tp8:4:32:700 gpt-oss:4:6:700 gpt-oss:4:2:6000 gpt-oss:4:24:700 qwen-64-8:4:2:1000 qwen-64-8:4:2:3000 qwen-64-8:4:12:700 llama3-70b-tp8:8:2:2500 llama3-70b-tp8:8:32:700 llama3-8b:8:2:1000 llama3-8b:8:2:3000 llama3-8b:8:12:700 gpt-oss:8:6:500 gpt-oss:8:1:12000 gpt-oss:8:24:700 qwen-64-8:8:1:2500 qwen-64-8:8:8:700"
B="llama3-70b-tp8:4:1:32768 llama3-70b-tp8:4:2:32768"
timeout 150 python3 tools/gqa_plan_ab.py --rounds 2 --batch $A --variant narrow block_n=32 --variant wide block_n=64 --out $OUT/logs/blocks_a.jsonl > $OUT/logs/blocks_a.txt 2>&1; echo "a exit $?"
timeout 40 python3 tools/gqa_plan_ab.py --rounds 2 --batch $B --variant narrow block_n=64 --variant wide block_n=128 --out $OUT/logs/blocks_b.jsonl > $OUT/logs/blocks_b.txt 2>&1; echo "b exit $?"
python3 - <<'PY'
import json, os
logs = os.environ["OUT"] + "/logs"
for f in ("blocks_a", "blocks_b"):
    for line in open(f"{logs}/{f}.jsonl"):
        r = json.loads(line)
        n, w, p = min(r["narrow"]), min(r["wide"]), min(r["planned"])
        print(f"{r['batch']:28s} narrow {n:7.1f} wide {w:7.1f} {100 * (w / n - 1):+6.1f}%  planned {p:7.1f} {r['plan planned']} {r['plan narrow'][3]}/{r['plan wide'][3]}")
PY
cd $OUT && tar czf logs.tgz logs && rm -rf logs
