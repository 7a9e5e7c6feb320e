# Session 42, call 1: (a) v0.2.46 (GQA_WIDE_TILE_MIN_BLOCKS 4 -> 3) against v0.2.45
# (.old_src/v45) on uniform batches whose plans it changes, and six it does not; (b) the
# block-start key slots (.old_src/v46slots: cpu/gqa_block_slots.patch on v0.2.46) against
# v0.2.46 on the GQA ragged / one-long batches at qlen 1, 4, 8.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
B="llama3-70b-tp8:4:32:2000 llama3-70b-tp8:4:48:2000 llama3-70b-tp8:4:64:2000 llama3-70b-tp8:4:16:8000 llama3-70b-tp8:4:4:16000 llama3-70b-tp8:4:8:4000 llama3-70b-tp8:4:1:8000 llama3-70b-tp8:4:48:768 llama3-70b-tp8:4:16:768"
B="$B gpt-oss:4:8:2000 gpt-oss:4:4:4000 gpt-oss:4:24:768 qwen-64-8:4:8:2000 qwen-64-8:4:4:4000 qwen-64-8:4:48:768"
B="$B llama3-70b-tp8:8:16:2000 llama3-70b-tp8:8:8:4000 llama3-70b-tp8:8:4:8000 llama3-70b-tp8:8:1:16000"
B="$B llama3-8b:8:8:2000 llama3-8b:8:4:4000 llama3-8b:8:48:768 llama3-8b:8:2:8000"
B="$B gpt-oss:8:8:2000 gpt-oss:8:4:4000 gpt-oss:8:16:768 qwen-64-8:8:8:2000 qwen-64-8:8:4:4000 qwen-64-8:8:16:768"
B="$B llama3-70b-tp8:4:4:16384 llama3-70b-tp8:8:16:4096 gpt-oss:8:16:1024 qwen-64-8:4:8:2048 llama3-8b:8:8:1024 llama3-70b-tp8:4:32:100-2000"
for tree in v45 v46; do
  root=$PWD; [ $tree = v45 ] && root=$PWD/.old_src/v45
  timeout 115 python3 $root/tools/gqa_plan_ab.py --rounds 2 --batch $B --out $OUT/logs/ab_$tree.jsonl > $OUT/logs/ab_$tree.txt 2>&1; echo "$tree exit $?"
done
python3 - <<'PY'
import json, os
logs = os.environ["OUT"] + "/logs"
rows = {t: {json.loads(l)["batch"]: json.loads(l) for l in open(f"{logs}/ab_{t}.jsonl")} for t in ("v45", "v46")}
for batch, old in rows["v45"].items():
    new = rows["v46"].get(batch)
    if new:
        o, n = min(old["planned"]), min(new["planned"])
        same = "" if old["plan planned"] == new["plan planned"] else f"  {old['plan planned']} -> {new['plan planned']}"
        print(f"{batch:34s} v0.2.45 {o:7.1f} v0.2.46 {n:7.1f} {100 * (n / o - 1):+6.1f}%{same}")
PY
for tree in v46 v46slots; do
  root=$PWD/src; [ $tree = v46slots ] && root=$PWD/.old_src/v46slots/src
  PYTHONPATH=$root timeout 160 python3 -m splitkv bench --kind gqa --special --labels ragged 1x --models llama3-8b gpt-oss qwen-64-8 llama3-70b-tp8 --qlen 1 4 8 --providers splitkv --rep-ms 50 --out $OUT/logs/special_$tree.json > $OUT/logs/special_$tree.txt 2>&1; echo "special $tree exit $?"
done
tail -n 26 $OUT/logs/special_v46.txt | cut -c1-170
tail -n 26 $OUT/logs/special_v46slots.txt | cut -c1-170
cd $OUT && tar czf logs.tgz logs && rm -rf logs
