# Session 42, call 2: v0.2.46's wide-block rule at its wave boundary (11 batches at 32- and
# 64-key blocks, the planner's choice beside them), the block-start key slots against v0.2.46
# (.old_src/v46) at llama3-70b-tp8 (2 rounds a tree, alternating), then the whole GPU suite on
# the working tree (v0.2.46 + the slots).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
B="llama3-70b-tp8:4:40:2000 llama3-70b-tp8:4:24:4000 gpt-oss:8:12:768 llama3-70b-tp8:4:56:2000 llama3-70b-tp8:4:32:4000 qwen-64-8:4:6:2000 qwen-64-8:4:16:768 llama3-8b:8:6:2000 qwen-64-8:8:4:2000 gpt-oss:8:24:768 qwen-64-8:8:2:4000"
timeout 100 python3 tools/gqa_plan_ab.py --rounds 2 --batch $B --variant k32 block_n=32 --variant k64 block_n=64 --out $OUT/logs/boundary.jsonl > $OUT/logs/boundary.txt 2>&1; echo "boundary exit $?"
python3 - <<'PY'
import json, os
for line in open(os.environ["OUT"] + "/logs/boundary.jsonl"):
    r = json.loads(line)
    a, b, p = min(r["k32"]), min(r["k64"]), min(r["planned"])
    print(f"{r['batch']:28s} k32 {a:7.1f} k64 {b:7.1f} 64/32 {100 * (b / a - 1):+6.1f}%  planned {p:7.1f} {r['plan planned']}")
PY
for round in 1 2; do
  for tree in v46 slots; do
    root=$PWD/src; [ $tree = v46 ] && root=$PWD/.old_src/v46/src
    PYTHONPATH=$root timeout 60 python3 -m splitkv bench --kind gqa --special --labels ragged 1x --models llama3-70b-tp8 --qlen 1 4 8 --providers splitkv --rep-ms 100 --out $OUT/logs/special_${tree}_$round.json > $OUT/logs/special_${tree}_$round.txt 2>&1; echo "special $tree $round exit $?"
    grep p50 $OUT/logs/special_${tree}_$round.txt | cut -c1-80
  done
done
export PYTHONPATH=$PWD/src:$PWD/tests
timeout 420 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -5 $OUT/logs/pytest.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
