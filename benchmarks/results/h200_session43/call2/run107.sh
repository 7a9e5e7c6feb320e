# Session 43, call 2: the narrowed one-split rule (64 rows only, 0.6 of the SMs) on held-out
# batches: v0.2.47's tree (.old_src/v47), its default ("planned") against one split ("s1",
# v0.2.48's plan where the rule fires; checked against the new tree's --plans-only). Then
# the GQA GPU test files on v0.2.48.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
HELD="gpt-oss:8:10:512 gpt-oss:8:11:1500 gpt-oss:8:10:2048 gpt-oss:8:11:256 gpt-oss:8:10:768 qwen-64-8:8:10:1024 qwen-64-8:8:11:512 qwen-64-8:8:10:256 qwen-64-8:8:11:768 gpt-oss:8:36:1024 gpt-oss:8:56:768"
CTRL="gpt-oss:8:9:1024 qwen-64-8:8:9:768 qwen-64-8:8:9:256 gpt-oss:8:9:512 qwen-64-8:8:34:512 qwen-64-8:8:12:2048 gpt-oss:8:6:1024"
python3 tools/gqa_plan_ab.py --plans-only --batch $HELD $CTRL > $OUT/logs/plans_v48.txt 2>&1
timeout 150 python3 .old_src/v47/tools/gqa_plan_ab.py --rounds 2 --batch $HELD $CTRL --variant s1 num_splits=1 --out $OUT/logs/ab.jsonl > $OUT/logs/ab.txt 2>&1; echo "ab exit $?"
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
timeout 200 python3 -m pytest tests/test_gqa_gpu.py tests/test_one_split_output.py tests/test_gqa_tile_rules.py tests/test_gqa_compiled.py tests/test_gqa_decode.py -n 10 -q -p no:cacheprovider > $OUT/logs/pytest_gqa.txt 2>&1; echo "pytest exit $?"
tail -2 $OUT/logs/pytest_gqa.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
