# Session 56's call 4 (carry run164.sh and run165.sh). run164 again in full (its call returned
# 8 of its 22 files: the device tool brings back at most 8, so this call packs its logs into
# one archive), then session 52's run156 items (a) and (b): gpt-oss's 64-row tile at qlen 8
# and llama3-70b-tp8's short splits, each on its default split count and on half of it.
# Predictions: docs/perf.md "Session 52: predictions for run155", "... for run156".
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
bash run164.sh > $OUT/run164_stdout.txt 2>&1; echo "run164 exit $?"
A="gpt-oss:8:18:32768 gpt-oss:8:10:65536 gpt-oss:8:42:4000 gpt-oss:8:44:32768 gpt-oss:8:12:131072 gpt-oss:8:6:65536 gpt-oss:8:26:16384 gpt-oss:8:28:32768 gpt-oss:8:16:32768"
B="llama3-70b-tp8:1:22:1000 llama3-70b-tp8:1:35:1000 llama3-70b-tp8:1:40:2048 llama3-70b-tp8:1:23:4096 llama3-70b-tp8:1:12:4000 llama3-70b-tp8:1:56:1000 llama3-70b-tp8:1:30:4000 llama3-70b-tp8:1:2:32768"
ab() { name=$1; shift; timeout 150 python3 tools/gqa_plan_ab.py --rounds 2 --variant half num_splits=@planned/2 kv_pack=@planned --builds $OUT/logs/builds_$name.jsonl --out $OUT/logs/half_$name.jsonl --batch "$@" > /dev/null 2>$OUT/logs/half_$name.err; echo "ab $name exit $?"; }
ab oss8 $A
ab l70short $B
python3 - <<'PY' | tee $OUT/logs/run156_summary.txt
import glob, json, os
for path in sorted(glob.glob(os.environ["OUT"] + "/logs/builds_[ol][s7]*.jsonl")):
    for line in open(path):
        b = json.loads(line)
        print(os.path.basename(path), "regs", b["regs"], "warps", b["warps"], "shared", b["shared"], "resident", b["resident"], b["key"][:120])
for path in sorted(glob.glob(os.environ["OUT"] + "/logs/half_*.jsonl")):
    for line in open(path):
        r = json.loads(line)
        a, b = min(r["planned"]), min(r["half"])
        print(f'{r["batch"]:28s} default {a:8.1f} half {b:8.1f} {100*(b/a-1):+6.1f}%  {r["plan planned"]} half {r["plan half"]}')
PY
mv $OUT/run164_stdout.txt $OUT/logs/
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs && ls -la $OUT
