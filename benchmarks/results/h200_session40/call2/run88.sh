# Session 40, call 2: v0.2.43 (the uniform GQA kernel's head blocks fastest, one head block a
# compile-time 0; 3 stages for one split of 64 rows at head dim 64) against v0.2.42 (HEAD's src,
# carried as .old_src/v42), default plans; 16-row head blocks at qlen 4 and 8; the GQA GPU tests.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
B="gpt-oss:1:64:4096 gpt-oss:1:128:4096 gpt-oss:4:64:4096 gpt-oss:4:128:4096 gpt-oss:8:64:4096 gpt-oss:8:128:1024 gpt-oss:4:8:65536 llama3-8b:1:128:4096 llama3-8b:4:64:4096 llama3-8b:8:64:4096 qwen-64-8:1:128:4096 qwen-64-8:4:64:4096 qwen-64-8:4:128:4096 qwen-64-8:4:32:16384 llama3-70b-tp8:1:64:4096"
for tree in old new; do
  root=$PWD; [ $tree = old ] && root=$PWD/.old_src/v42
  timeout 200 python3 $root/tools/gqa_plan_ab.py --batch $B --out $OUT/logs/defaults_$tree.jsonl --builds $OUT/logs/defaults_${tree}_builds.jsonl > $OUT/logs/defaults_$tree.txt 2>&1; echo "$tree exit $?"
done
python3 - <<'PY'
import json, os
logs = os.environ["OUT"] + "/logs"
rows = {t: {json.loads(l)["batch"]: json.loads(l) for l in open(f"{logs}/defaults_{t}.jsonl")} for t in ("old", "new")}
for batch, old in rows["old"].items():
    new = rows["new"].get(batch)
    if new:
        o, n = min(old["planned"]), min(new["planned"])
        print(f"{batch:28s} v0.2.42 {o:8.1f} v0.2.43 {n:8.1f} {100 * (n / o - 1):+6.1f}%  {old['plan planned']} -> {new['plan planned']}")
PY
# 16-row head blocks (two a kv head at qlen 4 x 8 heads, four at qlen 8), now neighbours in the grid.
timeout 150 python3 tools/gqa_plan_ab.py --batch gpt-oss:4:64:4096 gpt-oss:4:128:4096 gpt-oss:8:64:4096 gpt-oss:4:32:16384 qwen-64-8:4:64:4096 qwen-64-8:4:128:4096 --variant "16 rows" block_h=16 --variant "2 stages" split_num_stages=2 --out $OUT/logs/rows16.jsonl --builds $OUT/logs/rows16_builds.jsonl > $OUT/logs/rows16.txt 2>&1; echo "rows16 exit $?"
cut -c1-330 $OUT/logs/rows16.txt | tail -6
export PYTHONPATH=$PWD/src:$PWD/tests
timeout 200 python3 -m pytest tests -k "gqa or one_split" -n 12 -q -p no:cacheprovider > $OUT/logs/pytest_gqa.txt 2>&1; echo "pytest exit $?"
tail -3 $OUT/logs/pytest_gqa.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
