# Session 47, call 1: kv heads packed two a program (`kv_pack=2`, gqa_pack.py) against each
# batch's default plan (kv_pack 1), 2 rounds alternating, CUDA-graph medians; first the packed
# tests on the GPU (bf16 and fp16).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
export PYTHONPATH=$PWD/src:$PWD/tests
timeout 120 python3 -m pytest tests/test_gqa_kv_pack.py -n 4 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 3 $OUT/logs/pytest.txt
timeout 420 python3 tools/gqa_plan_ab.py --rounds 2 --variant p2 kv_pack=2 --out $OUT/logs/ab.jsonl --builds $OUT/logs/builds.jsonl --batch \
  gpt-oss:1:ragged gpt-oss:1:one-long gpt-oss:1:1:131072 gpt-oss:1:8:32768 gpt-oss:1:32:4096 gpt-oss:1:128:4096 gpt-oss:1:32:32768 gpt-oss:1:64:1000-8000 gpt-oss:1:16:2048 \
  qwen-64-8:1:ragged qwen-64-8:1:one-long qwen-64-8:1:8:32768 qwen-64-8:1:32:4096 \
  llama3-8b:1:ragged llama3-8b:1:one-long llama3-8b:1:8:32768 \
  llama3-8b:2:ragged llama3-8b:2:one-long llama3-8b:2:8:32768 llama3-8b:2:32:4096 \
  > $OUT/logs/ab.txt 2>&1; echo "ab exit $?"
python3 - <<'PY'
import json, os
for line in open(os.environ["OUT"] + "/logs/ab.jsonl"):
    r = json.loads(line)
    a, b = min(r["planned"]), min(r["p2"])
    print(f'{r["batch"]:28s} {a:8.1f} {b:8.1f} {b/a:6.3f}  {r["plan planned"]} {r["plan p2"]}')
PY
tail -n 5 $OUT/logs/ab.txt
