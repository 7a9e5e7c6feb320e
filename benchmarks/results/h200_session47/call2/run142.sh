# Session 47, call 2: gpt-oss qlen 1, each batch's default against kv_pack=2 (the planner's
# split choice for the packed tile), and the one-split batches also packed on one split
# pinned; 2 rounds alternating, CUDA-graph medians.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
export PYTHONPATH=$PWD/src:$PWD/tests
B="gpt-oss:1:1:32768 gpt-oss:1:4:32768 gpt-oss:1:8:8192 gpt-oss:1:8:131072 gpt-oss:1:16:16384 gpt-oss:1:64:4096 gpt-oss:1:96:4096 gpt-oss:1:128:2048 gpt-oss:1:128:8192 gpt-oss:1:256:1024 gpt-oss:1:256:4096 gpt-oss:1:16:100-32768 gpt-oss:1:32:100-8000 gpt-oss:1:48:100-4000 gpt-oss:1:128:100-4000 gpt-oss:1:256:100-2000 gpt-oss:1:24:2000-60000 gpt-oss:1:8:1000-131072 gpt-oss:1:96:500-6000"
S1="gpt-oss:1:32:8192 gpt-oss:1:48:4096 gpt-oss:1:64:16384 gpt-oss:1:32:4096 gpt-oss:1:16:2048 gpt-oss:1:64:4096 gpt-oss:1:96:4096 gpt-oss:1:128:4096"
timeout 250 python3 tools/gqa_plan_ab.py --rounds 2 --variant p2 kv_pack=2 --out $OUT/logs/ab.jsonl --batch $B > $OUT/logs/ab.txt 2>&1; echo "ab exit $?"
timeout 200 python3 tools/gqa_plan_ab.py --rounds 2 --variant p2 kv_pack=2 --variant p2s1 kv_pack=2 num_splits=1 --out $OUT/logs/ab_s1.jsonl --batch $S1 > $OUT/logs/ab_s1.txt 2>&1; echo "ab_s1 exit $?"
python3 - <<'PY'
import json, os
for name in ("ab", "ab_s1"):
    for line in open(os.environ["OUT"] + f"/logs/{name}.jsonl"):
        r = json.loads(line)
        a = min(r["planned"])
        cells = " ".join(f'{v}:{min(r[v]):7.1f} {min(r[v])/a:6.3f}' for v in ("p2", "p2s1") if v in r)
        print(f'{r["batch"]:28s} {a:8.1f} {cells}  {r["plan planned"]} {r["plan p2"]}')
PY
tail -n 3 $OUT/logs/ab.txt
