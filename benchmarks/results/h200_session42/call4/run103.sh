# Session 42, call 4: 64- against 128-key blocks on uniform splits of 250-380 keys at 32 rows
# (head dim 128), then pinned split counts on 8-kv-head qlen 8 batches with the GPU's builds.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
A="llama3-70b-tp8:4:4:12000 llama3-70b-tp8:4:6:5000 llama3-70b-tp8:4:8:6000 llama3-70b-tp8:4:8:12000 llama3-70b-tp8:4:12:2500 llama3-70b-tp8:4:16:3000 llama3-70b-tp8:4:16:5000 llama3-70b-tp8:4:20:1000 llama3-70b-tp8:4:32:1000 llama3-70b-tp8:4:40:700 llama3-70b-tp8:4:64:1000 llama3-70b-tp8:4:64:1500 llama3-70b-tp8:4:32:2000 llama3-70b-tp8:4:48:2000 qwen-64-8:4:40:700 llama3-8b:8:48:700"
timeout 120 python3 tools/gqa_plan_ab.py --rounds 2 --batch $A --variant k64 block_n=64 --variant k128 block_n=128 --out $OUT/logs/blocks.jsonl > $OUT/logs/blocks.txt 2>&1; echo "blocks exit $?"
python3 - <<'PY'
import json, os
for line in open(os.environ["OUT"] + "/logs/blocks.jsonl"):
    r = json.loads(line)
    a, b, p = min(r["k64"]), min(r["k128"]), min(r["planned"])
    print(f"{r['batch']:28s} k64 {a:7.1f} k128 {b:7.1f} {100 * (b / a - 1):+6.1f}%  planned {p:7.1f} {r['plan planned']}")
PY
S=""
for m in gpt-oss qwen-64-8; do for n in 12 20 32; do for k in 1024 2048; do S="$S $m:8:$n:$k"; done; done; done
timeout 200 python3 tools/gqa_plan_ab.py --rounds 1 --batch $S --variant s1 num_splits=1 --variant s2 num_splits=2 --variant s4 num_splits=4 --variant s8 num_splits=8 --out $OUT/logs/counts.jsonl --builds $OUT/logs/counts_builds.jsonl > $OUT/logs/counts.txt 2>&1; echo "counts exit $?"
cut -c1-220 $OUT/logs/counts.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
