# Session 42, call 3: v0.2.46's wide-block rule on 21 held-out plans at both key blocks
# (the planner's choice beside them), then the whole GPU suite beside the memcheck.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
A="qwen-64-8:4:2:8000 llama3-8b:8:16:768 qwen-64-8:8:12:768 gpt-oss:8:20:768 llama3-8b:8:1:16000 gpt-oss:4:12:2000 gpt-oss:8:6:4000 gpt-oss:4:20:768 llama3-70b-tp8:4:20:4000 qwen-64-8:4:12:768 llama3-8b:8:12:768 qwen-64-8:8:8:768 llama3-8b:8:1:8000 llama3-70b-tp8:8:2:16000 qwen-64-8:4:1:768 gpt-oss:8:1:16000 llama3-70b-tp8:4:1:768"
B="qwen-64-8:4:40:768 llama3-8b:8:40:768 llama3-70b-tp8:4:128:768 llama3-70b-tp8:4:6:16000"
timeout 110 python3 tools/gqa_plan_ab.py --rounds 2 --batch $A --variant narrow block_n=32 --variant wide block_n=64 --out $OUT/logs/heldout_a.jsonl > $OUT/logs/heldout_a.txt 2>&1; echo "a exit $?"
timeout 40 python3 tools/gqa_plan_ab.py --rounds 2 --batch $B --variant narrow block_n=64 --variant wide block_n=128 --out $OUT/logs/heldout_b.jsonl > $OUT/logs/heldout_b.txt 2>&1; echo "b exit $?"
python3 - <<'PY'
import json, os
logs = os.environ["OUT"] + "/logs"
for f in ("heldout_a", "heldout_b"):
    for line in open(f"{logs}/{f}.jsonl"):
        r = json.loads(line)
        n, w, p = min(r["narrow"]), min(r["wide"]), min(r["planned"])
        print(f"{r['batch']:28s} narrow {n:7.1f} wide {w:7.1f} {100 * (w / n - 1):+6.1f}%  planned {p:7.1f} {r['plan planned']} {r['plan narrow'][3]}/{r['plan wide'][3]}")
PY
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 420 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 430 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -4 $OUT/logs/pytest.txt
wait
tail -4 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
