# Session 54's last try, within the device budget left (~500 s): run158's item (c) alone,
# then the GQA and shared-prefix GPU tests (not the whole suite). Carry run159.sh.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $OUT/logs/gpu_env.txt
timeout 130 python3 tools/gqa_plan_ab.py --rounds 2 --no-lengths --variant half num_splits=@planned/2 kv_pack=@planned --variant bal schedule=balanced --out $OUT/logs/graph.jsonl --batch llama3-8b:1:24:1000-32768 llama3-8b:1:24:32768 llama3-8b:1:one-long gpt-oss:1:ragged gpt-oss:4:48:500-4000 gpt-oss:4:48:4000 > /dev/null 2>$OUT/logs/graph.err; echo "graph exit $?"
python3 - <<'PY'
import json, os
graph = os.environ["OUT"] + "/logs/graph.jsonl"
for line in open(graph) if os.path.exists(graph) else []:
    r = json.loads(line)
    a, b, c = min(r["planned"]), min(r["half"]), min(r["bal"])
    print(f'{r["batch"]:28s} graph plan {a:8.1f} half {b:8.1f} ({100*(b/a-1):+6.1f}%) balanced {c:8.1f} ({100*(c/a-1):+6.1f}%)  {r["plan planned"]} {r["plan half"]} {r["plan bal"]}')
PY
tail -3 $OUT/logs/graph.err
PYTHONPATH=$PWD/src:$PWD/tests timeout 170 python3 -m pytest tests/test_gqa_gpu.py tests/test_shared_prefix.py tests/test_shared_prefix_gqa.py tests/test_merge_states.py -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 3 $OUT/logs/pytest.txt
grep -E "^(FAILED|ERROR)" $OUT/logs/pytest.txt | head -20
