# Session 56's call 5 (H100 or H200; carry run166.sh). (1) gpt-oss qlen 1, equal long requests
# where the planner's uniform plan is one unpacked split (the halving rule's half of an unpacked
# launch): against 2 and 4 packed splits and the balanced schedule (run164's o-curve lost 3-7%
# to 8 packed splits at 40-64 x 32,768 on the H100). (2) Issue 5's standing on this GPU: MLA
# ragged / one-long at qlen 1, 2, 4 beside the Triton peer; the MLA cascade; GQA ragged /
# one-long beside the peer. Predictions: docs/perf.md "Session 56: predictions for run166".
# Logs come back as one archive (the device tool returns at most 8 files).
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $OUT/logs/gpu_env.txt
P="gpt-oss:1:36:32768 gpt-oss:1:40:32768 gpt-oss:1:48:32768 gpt-oss:1:56:32768 gpt-oss:1:64:32768 gpt-oss:1:64:16384 gpt-oss:1:48:8192 gpt-oss:1:36:65536 gpt-oss:1:100:8192"
timeout 150 python3 tools/gqa_plan_ab.py --rounds 2 --variant p2 num_splits=2 kv_pack=2 --variant p4 num_splits=4 kv_pack=2 --variant bal schedule=balanced --out $OUT/logs/pack.jsonl --batch $P > /dev/null 2>$OUT/logs/pack.err; echo "pack exit $?"
python3 - <<'PY' | tee $OUT/logs/pack_summary.txt
import json, os
path = os.environ["OUT"] + "/logs/pack.jsonl"
for line in open(path) if os.path.exists(path) else []:
    r = json.loads(line)
    a = min(r["planned"])
    cols = "  ".join(f'{v} {min(r[v]):8.1f} ({100*(min(r[v])/a-1):+5.1f}%)' for v in ("p2", "p4", "bal"))
    print(f'{r["batch"]:22s} planned {a:8.1f}  {cols}  {r["plan planned"]}')
PY
timeout 150 python3 -m splitkv bench --rep-ms 30 --providers splitkv,triton-peer --special --labels ragged 1x --heads 12 --qlen 1 2 4 --out $OUT/logs/mla_standing --tag mla_standing > $OUT/logs/mla_standing.txt 2>&1; echo "mla standing exit $?"
timeout 100 python3 -m splitkv bench --rep-ms 30 --providers splitkv,splitkv-prefix --special --labels 8x327600 '48 in 6' --heads 12 --out $OUT/logs/mla_cascade --tag mla_cascade > $OUT/logs/mla_cascade.txt 2>&1; echo "mla cascade exit $?"
timeout 120 python3 -m splitkv bench --rep-ms 30 --kind gqa --providers splitkv,triton-peer --special --labels ragged 1x131072 --models llama3-8b gpt-oss llama3-70b-tp8 --out $OUT/logs/gqa_standing --tag gqa_standing > $OUT/logs/gqa_standing.txt 2>&1; echo "gqa standing exit $?"
for f in mla_standing mla_cascade gqa_standing; do tail -n 25 $OUT/logs/$f.txt; done
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
