# Session 55's planned call: session 54's run158.sh (run156 item (c) first, then this tree's GPU
# suite beside memcheck; QUICK=1 for the short form), then the GQA GPU tests on the tree with
# `h200_session54/planned/gqa_graph_balanced.patch` applied (a CUDA graph's GQA plan balanced
# from two requests), built here as `.old_src/graph_balanced/src` and carried, so that the
# patch can land on the same call's evidence if item (c) holds. Carry run160.sh and
# .old_src/graph_balanced.
# Kept as it ran (its first part repeats run158.sh's lines). Its last step tested this tree, not
# the patched one: pyproject.toml's pytest `pythonpath = ["src"]` goes ahead of PYTHONPATH
# (docs/perf.md, session 55); pass `-o pythonpath=...` to test another tree.
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
tests="tests"
if [ "${QUICK:-0}" = 1 ]; then
  tests="tests/test_gqa_gpu.py tests/test_shared_prefix.py tests/test_shared_prefix_gqa.py tests/test_merge_states.py"
else
  (PYTORCH_NO_CUDA_MEMORY_CACHING=1 PYTHONPATH=$PWD/src:$PWD/tests timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
fi
PYTHONPATH=$PWD/src:$PWD/tests timeout 280 python3 -m pytest $tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 4 $OUT/logs/pytest.txt
grep -E "^(FAILED|ERROR)" $OUT/logs/pytest.txt | head -20
if [ -d .old_src/graph_balanced/src ]; then
  PYTHONPATH=$PWD/.old_src/graph_balanced/src:$PWD/tests timeout 100 python3 -m pytest tests/test_gqa_gpu.py -n 8 -q -p no:cacheprovider > $OUT/logs/pytest_graph_balanced.txt 2>&1; echo "graph-balanced pytest exit $?"
  tail -n 3 $OUT/logs/pytest_graph_balanced.txt
  grep -E "^(FAILED|ERROR)" $OUT/logs/pytest_graph_balanced.txt | head -10
fi
wait
[ -f $OUT/logs/memcheck.txt ] && tail -n 3 $OUT/logs/memcheck.txt

