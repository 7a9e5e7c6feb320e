# Session 40, call 6: split counts 1-8 pinned (`num_splits`, the tile the planner gives each)
# on the batches where call 5 saw waves of what the builds hold decide: data for a residency-
# aware GQA fill rule (docs/perf.md "Next runs (session 40)" item 1), with the GPU's builds.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
timeout 260 python3 tools/gqa_plan_ab.py --rounds 1 --batch gpt-oss:4:40:4000 gpt-oss:4:48:4000 gpt-oss:4:64:4000 gpt-oss:4:48:2048 gpt-oss:1:48:4000 gpt-oss:1:96:4000 qwen-64-8:4:48:4000 qwen-64-8:4:64:4000 llama3-8b:1:48:4000 llama3-8b:1:96:4000 --variant "1 split" num_splits=1 --variant "2 splits" num_splits=2 --variant "4 splits" num_splits=4 --variant "8 splits" num_splits=8 --out $OUT/logs/splits.jsonl --builds $OUT/logs/splits_builds.jsonl > $OUT/logs/splits.txt 2>&1; echo "exit $?"
python3 - <<'PY'
import json, os
for line in open(os.environ["OUT"] + "/logs/splits.jsonl"):
    r = json.loads(line)
    cells = [f"{name}: {r[name][0]:7.1f} {r['plan ' + name][3]}k/{r['plan ' + name][4]}s" for name in ("planned", "1 split", "2 splits", "4 splits", "8 splits")]
    print(f"{r['batch']:24s} ({r['plan planned'][1]} planned) " + " | ".join(cells))
PY
