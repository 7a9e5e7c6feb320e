# Session 52's planned call 3 (after run154 and run155): (0) the GQA GPU tests, v0.2.61's new
# case among them (gpt-oss at qlen 4 on halved split counts); (a) gpt-oss's 64-row uniform tile at
# qlen 8 (4 an SM compiled, not tabled by the wave rule) at 1.09-1.70 waves and a control
# within a wave; (b) llama3-70b-tp8's short splits (125-256 keys) within one wave. Each batch
# on its default split count and on half of it (the kv pack kept), 2 rounds. (c) a CUDA
# graph's plan on ragged and equal lengths against half its splits and the balanced schedule. Predictions
# (written before the run): pred_run156.jsonl beside this script (`tools/wave_model.py`,
# FITTED) and docs/perf.md "Session 52: predictions for run156". Carry run156.sh.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
workers=$(python3 -c "import xdist" 2>/dev/null && echo "-n 8" || echo "-o addopts=-ra")  # as tools/device_check.sh
timeout 240 python3 -m pytest -q -p no:cacheprovider $workers tests/test_gqa_gpu.py tests/test_gqa_uniform_waves.py 2>&1 | tail -5 | tee $OUT/logs/gqa_gpu_tests.txt; echo "gqa gpu tests exit $?"
A="gpt-oss:8:18:32768 gpt-oss:8:10:65536 gpt-oss:8:42:4000 gpt-oss:8:44:32768 gpt-oss:8:12:131072 gpt-oss:8:6:65536 gpt-oss:8:26:16384 gpt-oss:8:28:32768 gpt-oss:8:16:32768"
B="llama3-70b-tp8:1:22:1000 llama3-70b-tp8:1:35:1000 llama3-70b-tp8:1:40:2048 llama3-70b-tp8:1:23:4096 llama3-70b-tp8:1:12:4000 llama3-70b-tp8:1:56:1000 llama3-70b-tp8:1:30:4000 llama3-70b-tp8:1:2:32768"
ab() { name=$1; shift; timeout 150 python3 tools/gqa_plan_ab.py --rounds 2 --variant half num_splits=@planned/2 kv_pack=@planned --builds $OUT/logs/builds_$name.jsonl --out $OUT/logs/half_$name.jsonl --batch "$@" > /dev/null 2>$OUT/logs/half_$name.err; echo "ab $name exit $?"; }
ab oss8 $A
ab l70short $B
# (c) a CUDA graph's plan (`--no-lengths`: planned on the table's width, timed at the batch's
# lengths, as a captured graph replays them), against half its splits (v0.2.60's halving) and
# against the balanced schedule planned without lengths.
timeout 150 python3 tools/gqa_plan_ab.py --rounds 2 --no-lengths --variant half num_splits=@planned/2 kv_pack=@planned --variant bal schedule=balanced --out $OUT/logs/graph.jsonl --batch llama3-8b:1:24:1000-32768 llama3-8b:1:24:32768 llama3-8b:1:one-long gpt-oss:1:ragged gpt-oss:4:48:500-4000 gpt-oss:4:48:4000 > /dev/null 2>$OUT/logs/graph.err; echo "graph exit $?"
python3 - <<'PY'
import glob, json, os
for path in sorted(glob.glob(os.environ["OUT"] + "/logs/builds_*.jsonl")):
    for line in open(path):
        b = json.loads(line)
        print(os.path.basename(path), "regs", b["regs"], "warps", b["warps"], "shared", b["shared"], "resident", b["resident"], b["key"][:120])
for path in sorted(glob.glob(os.environ["OUT"] + "/logs/half_*.jsonl")):
    for line in open(path):
        r = json.loads(line)
        a, b = min(r["planned"]), min(r["half"])
        print(f'{r["batch"]:28s} default {a:8.1f} half {b:8.1f} {100*(b/a-1):+6.1f}%  {r["plan planned"]} half {r["plan half"]}')
graph = os.environ["OUT"] + "/logs/graph.jsonl"
for line in open(graph) if os.path.exists(graph) else []:
    r = json.loads(line)
    a, b, c = min(r["planned"]), min(r["half"]), min(r["bal"])
    print(f'{r["batch"]:28s} graph plan {a:8.1f} half {b:8.1f} ({100*(b/a-1):+6.1f}%) balanced {c:8.1f} ({100*(c/a-1):+6.1f}%)  {r["plan planned"]} {r["plan half"]} {r["plan bal"]}')
PY
