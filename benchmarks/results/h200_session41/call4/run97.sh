# Session 41, call 4: v0.2.45 (default uniform splits of one GQA kv head capped where a
# split's K and V are under 8 times its fp32 partials, in whole pages:
# gqa_tile_rules.gqa_partials_split_cap) against v0.2.44 (HEAD~'s src as .old_src/v44), on the
# default plans; then the whole GPU suite beside a full memcheck.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
B=""
for q in 2 4 8; do
  for rk in 1:32768 1:131072 2:65536 4:8192 4:16384 8:8192 16:4096 16:8000 32:2000 48:4000 256:500 32:100-2000 48:100-4000 16:500-8000; do B="$B llama3-70b-tp8:$q:$rk"; done
done
B="$B gpt-oss:8:8:2048 gpt-oss:8:16:1024 qwen-64-8:8:8:2048 llama3-8b:8:8:1024 gpt-oss:4:8:1024 llama3-8b:1:8:16384 gpt-oss:4:48:2048"
for tree in old new; do
  root=$PWD; [ $tree = old ] && root=$PWD/.old_src/v44
  timeout 100 python3 $root/tools/gqa_plan_ab.py --rounds 2 --batch $B --out $OUT/logs/ab_$tree.jsonl > $OUT/logs/ab_$tree.txt 2>&1; echo "$tree exit $?"
done
python3 - <<'PY'
import json, os
logs = os.environ["OUT"] + "/logs"
rows = {t: {json.loads(l)["batch"]: json.loads(l) for l in open(f"{logs}/ab_{t}.jsonl")} for t in ("old", "new")}
for batch, old in rows["old"].items():
    new = rows["new"].get(batch)
    if new:
        o, n = min(old["planned"]), min(new["planned"])
        same = "" if old["plan planned"] == new["plan planned"] else f"  {old['plan planned']} -> {new['plan planned']}"
        print(f"{batch:34s} v0.2.44 {o:7.1f} v0.2.45 {n:7.1f} {100 * (n / o - 1):+6.1f}%{same}")
PY
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 400 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 320 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -3 $OUT/logs/pytest.txt
wait
tail -4 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
