# Session 40, call 3: v0.2.44 (GQA key slots as low bits, page ids as the block's plus a
# pattern: kernels/paged.py) against v0.2.43 (HEAD's src carried as .old_src/v43): uniform
# GQA batches on their default plans, the GQA ragged / one-long batches, then GPU tests.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
B="gpt-oss:1:8:65536 gpt-oss:4:8:65536 gpt-oss:4:32:16384 gpt-oss:8:8:65536 gpt-oss:1:1:131072 gpt-oss:4:1:131072 llama3-8b:1:8:65536 llama3-8b:1:32:16384 llama3-8b:4:8:65536 llama3-8b:1:1:262144 qwen-64-8:1:8:65536 qwen-64-8:4:32:16384 llama3-70b-tp8:1:8:32768 llama3-70b-tp8:4:1:32768 gpt-oss:4:128:4096 llama3-8b:1:128:4096"
for tree in old new; do
  root=$PWD; [ $tree = old ] && root=$PWD/.old_src/v43
  timeout 170 python3 $root/tools/gqa_plan_ab.py --batch $B --out $OUT/logs/uniform_$tree.jsonl --builds $OUT/logs/uniform_${tree}_builds.jsonl > $OUT/logs/uniform_$tree.txt 2>&1; echo "$tree exit $?"
done
python3 - <<'PY'
import json, os
logs = os.environ["OUT"] + "/logs"
rows = {t: {json.loads(l)["batch"]: json.loads(l) for l in open(f"{logs}/uniform_{t}.jsonl")} for t in ("old", "new")}
for batch, old in rows["old"].items():
    new = rows["new"].get(batch)
    if new:
        o, n = min(old["planned"]), min(new["planned"])
        print(f"{batch:28s} v0.2.43 {o:8.1f} v0.2.44 {n:8.1f} {100 * (n / o - 1):+6.1f}%  {new['plan planned']}")
PY
for tree in old new; do
  root=$PWD/src; [ $tree = old ] && root=$PWD/.old_src/v43/src
  PYTHONPATH=$root timeout 150 python3 -m splitkv bench --kind gqa --special --labels ragged 1x --models llama3-8b gpt-oss qwen-64-8 llama3-70b-tp8 --qlen 1 4 --providers splitkv --out $OUT/logs/special_$tree.json > $OUT/logs/special_$tree.txt 2>&1; echo "special $tree exit $?"
done
tail -n 18 $OUT/logs/special_old.txt | cut -c1-160
tail -n 18 $OUT/logs/special_new.txt | cut -c1-160
export PYTHONPATH=$PWD/src:$PWD/tests
timeout 150 python3 -m pytest tests -k "gqa or one_split" -n 12 -q -p no:cacheprovider > $OUT/logs/pytest_gqa.txt 2>&1; echo "pytest exit $?"
tail -3 $OUT/logs/pytest_gqa.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
