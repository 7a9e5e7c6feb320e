# Session 47, call 7: small gpt-oss qlen 1 batches on many packed splits, v0.2.56's default
# (kv_pack 2) against kv_pack=1, 2 rounds alternating (data for next runs (session 47) item 3).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
timeout 150 python3 tools/gqa_plan_ab.py --rounds 2 --variant p1 kv_pack=1 --out $OUT/logs/ab.jsonl --batch gpt-oss:1:1:16384 gpt-oss:1:1:32768 gpt-oss:1:1:65536 gpt-oss:1:2:32768 gpt-oss:1:4:16384 gpt-oss:1:8:2048 gpt-oss:1:8:4096 gpt-oss:1:12:3000 gpt-oss:1:6:8192 gpt-oss:1:3:100-20000 gpt-oss:1:8:100-6000 > $OUT/logs/ab.txt 2>&1; echo "ab exit $?"
python3 - <<'PY'
import json, os
for line in open(os.environ["OUT"] + "/logs/ab.jsonl"):
    r = json.loads(line)
    a, b = min(r["planned"]), min(r["p1"])
    print(f'{r["batch"]:28s} packed {a:7.1f} unpacked {b:7.1f} packed/unpacked {a/b:6.3f}  {r["plan planned"]} {r["plan p1"]}')
PY
