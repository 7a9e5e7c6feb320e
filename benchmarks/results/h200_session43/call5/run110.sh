# Session 43, call 5: v0.2.49 (one split on the long-split tile within its wave, however short;
# 32 rows too, up to 384 KiB a program) on held-out batches: v0.2.48's tree (.old_src/v48),
# its default ("planned") against one split on the long-split tile ("L": v0.2.49's plan,
# checked against the new tree's --plans-only), 2 rounds. Then the whole GPU suite beside
# the memcheck on v0.2.49.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
G="gpt-oss:8:20:384 gpt-oss:8:24:640 gpt-oss:8:28:512 gpt-oss:8:32:600 gpt-oss:8:18:300 gpt-oss:8:13:600 gpt-oss:8:15:700 gpt-oss:8:11:900 gpt-oss:4:10:1024 gpt-oss:4:13:700 gpt-oss:4:28:512 gpt-oss:4:30:900 gpt-oss:4:22:300"
Q="qwen-64-8:8:14:200 qwen-64-8:8:26:256 qwen-64-8:4:12:640 qwen-64-8:4:28:384 qwen-64-8:4:16:700 llama3-8b:8:12:700 llama3-8b:8:30:384 llama3-8b:8:14:500"
python3 tools/gqa_plan_ab.py --plans-only --batch $G $Q > $OUT/logs/plans_v49.txt 2>&1
timeout 120 python3 .old_src/v48/tools/gqa_plan_ab.py --rounds 2 --batch $G --variant L num_splits=1 block_n=128 split_num_stages=3 page_prefetch=True --out $OUT/logs/ab_hd64.jsonl > $OUT/logs/ab_hd64.txt 2>&1; echo "hd64 exit $?"
timeout 100 python3 .old_src/v48/tools/gqa_plan_ab.py --rounds 2 --batch $Q --variant L num_splits=1 block_n=64 split_num_stages=3 page_prefetch=True --out $OUT/logs/ab_hd128.jsonl > $OUT/logs/ab_hd128.txt 2>&1; echo "hd128 exit $?"
cat $OUT/logs/ab_hd64.jsonl $OUT/logs/ab_hd128.jsonl > $OUT/logs/ab.jsonl
python3 tools/gqa_ab_compare.py $OUT/logs/ab.jsonl --variants planned L > $OUT/logs/ab_compare.txt; cat $OUT/logs/ab_compare.txt
python3 - <<'PY'
import json, os
logs = os.environ["OUT"] + "/logs"
new = {json.loads(l)["batch"]: json.loads(l)["plan planned"] for l in open(f"{logs}/plans_v49.txt") if l.startswith("{")}
for l in open(f"{logs}/ab.jsonl"):
    r = json.loads(l)
    v49 = new[r["batch"]]
    side = "L" if v49 == r["plan L"] else "planned" if v49 == r["plan planned"] else "neither"
    print(f"{r['batch']:28s} v0.2.49 plan = {side}")
PY
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -4 $OUT/logs/pytest.txt
wait
tail -3 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
