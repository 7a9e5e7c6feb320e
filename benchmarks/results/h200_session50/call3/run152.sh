# Session 50, call 3: (a) the MLA 6-group mix, which call 1 measured 198.0 -> 205.0 us at 12
# heads (202.1 -> 206.1 at 16) between v0.2.56 and this tree: v0.2.56 / v0.2.57 / this tree,
# 2 rounds alternating, 12 and 16 heads, with the 8 x 327,600 batch beside it; (b) the held-out
# check of the kv-pack rule fitted on call 2 (uniform packs need packed splits of more than 256
# keys of the longest request): 24 fresh gpt-oss qlen 1 batches where that rule unpacks
# (seeds 483 and 485 of tools/gqa_random_batches.py), the default (packed) against kv_pack=1,
# 2 rounds. Carry run152.sh, .old_src/v56 (v0.2.57 dropped: the device time left). Predictions: docs/perf.md
# "Session 50: predictions first".
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
H="gpt-oss:1:5:2957 gpt-oss:1:4:6653 gpt-oss:1:1:5522 gpt-oss:1:3:2382-7324 gpt-oss:1:3:6597 gpt-oss:1:2:2364 gpt-oss:1:2:7952 gpt-oss:1:2:11566 gpt-oss:1:5:2350 gpt-oss:1:1:7358 gpt-oss:1:3:4620 gpt-oss:1:6:5847 gpt-oss:1:6:4641 gpt-oss:1:8:2710 gpt-oss:1:6:7021 gpt-oss:1:1:8320 gpt-oss:1:3:1715-8175 gpt-oss:1:4:5637 gpt-oss:1:4:3491 gpt-oss:1:7:3899 gpt-oss:1:3:9273 gpt-oss:1:1:6152 gpt-oss:1:3:723-5810 gpt-oss:1:3:1526-4189"
timeout 200 python3 tools/gqa_plan_ab.py --rounds 2 --variant p1 kv_pack=1 --out $OUT/logs/heldout.jsonl --batch $H > $OUT/logs/heldout.txt 2>&1; echo "heldout exit $?"
python3 - <<'PY'
import json, math, os
logs = []
for line in open(os.environ["OUT"] + "/logs/heldout.jsonl"):
    r = json.loads(line)
    a, b = min(r["planned"]), min(r["p1"])
    logs.append(math.log(b / a))
    print(f'{r["batch"]:28s} packed {a:7.1f} unpacked {b:7.1f} {100*(b/a-1):+6.1f}%  {r["plan planned"]} {r["plan p1"]}')
print(f"held out: unpacked/packed geomean {math.exp(sum(logs)/len(logs)):.4f} over {len(logs)}, unpacked faster {sum(l < 0 for l in logs)}, worst {math.exp(max(logs)):.3f}")
PY
for r in 1 2; do
  for tree in .old_src/v56 .; do
    name=$(basename $tree); [ "$tree" = "." ] && name=new
    PYTHONPATH=$PWD/$tree/src timeout 50 python3 -m splitkv bench --special --heads 12 16 --labels 8x327600 '48 in 6' --providers splitkv-prefix --out $OUT/logs/mla_$name$r > $OUT/logs/mla_${name}_$r.txt 2>&1; echo "mla $name $r exit $?"
    grep "p50" $OUT/logs/mla_${name}_$r.txt | cut -c1-70
    rm -rf $OUT/logs/mla_$name$r
  done
done
