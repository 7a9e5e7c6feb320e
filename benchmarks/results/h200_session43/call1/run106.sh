# Session 43, call 1: v0.2.48's one-split rule (gqa_tile_rules.gqa_one_split_pays) against
# v0.2.47 (.old_src/v47), timed in one run of the old tree: its default ("planned") against
# its plan pinned to one split ("s1"), which is v0.2.48's default plan where the rule fires
# (checked here against the new tree's --plans-only). Then the whole GPU suite beside the
# memcheck on v0.2.48.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
FIT="gpt-oss:8:12:1024 gpt-oss:8:16:1024 qwen-64-8:8:16:1024 qwen-64-8:8:12:1024 gpt-oss:4:16:1024 gpt-oss:8:48:2048 gpt-oss:4:48:2048 gpt-oss:8:12:2048"
HELD="gpt-oss:8:12:256 gpt-oss:8:24:512 gpt-oss:8:14:768 gpt-oss:8:14:1500 gpt-oss:8:40:1024 gpt-oss:8:32:768 gpt-oss:8:20:512"
HELD="$HELD gpt-oss:4:12:512 gpt-oss:4:20:768 gpt-oss:4:14:1500 gpt-oss:4:40:1024 gpt-oss:4:24:256 gpt-oss:4:48:1500 gpt-oss:4:12:2048"
HELD="$HELD qwen-64-8:8:14:768 qwen-64-8:8:12:512 qwen-64-8:8:24:256 qwen-64-8:8:14:1024 qwen-64-8:8:16:256"
CTRL="gpt-oss:8:10:1024 qwen-64-8:8:10:768 qwen-64-8:8:40:768 llama3-8b:8:16:768 gpt-oss:4:40:4096"
python3 tools/gqa_plan_ab.py --plans-only --batch $FIT $HELD $CTRL > $OUT/logs/plans_v48.txt 2>&1
timeout 200 python3 .old_src/v47/tools/gqa_plan_ab.py --rounds 2 --batch $FIT $HELD $CTRL --variant s1 num_splits=1 --out $OUT/logs/ab.jsonl > $OUT/logs/ab.txt 2>&1; echo "ab exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/ab.jsonl --variants planned s1 > $OUT/logs/ab_compare.txt; cat $OUT/logs/ab_compare.txt
python3 - <<'PY'
import json, os
logs = os.environ["OUT"] + "/logs"
new = {json.loads(l)["batch"]: json.loads(l)["plan planned"] for l in open(f"{logs}/plans_v48.txt") if l.startswith("{")}
for l in open(f"{logs}/ab.jsonl"):
    r = json.loads(l)
    v48 = new[r["batch"]]
    side = "s1" if v48 == r["plan s1"] else "planned" if v48 == r["plan planned"] else "neither"
    print(f"{r['batch']:28s} v0.2.48 plan = {side}")
PY
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -4 $OUT/logs/pytest.txt
wait
tail -3 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
