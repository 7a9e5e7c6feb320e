# Session 51, call 1: next runs (session 50) items 1-3. (1) the MLA 6-group mix's phases on
# this tree and v0.2.56's kernels; (2) Triton's launch path, part by part; (3) the 2-stage
# uniform split count halved where the default grid is 1.2-1.7 waves (unpacked), with 3
# controls at 0.97 waves. Carry run153.sh and .old_src/v56. Predictions: docs/perf.md
# "Session 51: predictions first".
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
echo "== (2) launch path"
timeout 150 python3 tools/launch_path_time.py --calls 1000 --repeat 5 2>&1 | tee $OUT/logs/launch_path.txt; echo "launch_path exit $?"
echo "== (1) cascade phases"
timeout 100 python3 tools/cascade_phases.py 2>&1 | tee $OUT/logs/phases_new.txt; echo "phases exit $?"
for r in 1 2; do
  timeout 60 python3 tools/cascade_phases.py --kernels --shapes mix 2>&1 | tee $OUT/logs/kernels_new_$r.txt; echo "kernels new exit $?"
  PYTHONPATH=$PWD/.old_src/v56/src timeout 60 python3 tools/cascade_phases.py --kernels --shapes mix 2>&1 | tee $OUT/logs/kernels_v56_$r.txt; echo "kernels v56 exit $?"
done
echo "== (3) half the splits"
ab() { n=$1; shift; timeout 120 python3 tools/gqa_plan_ab.py --rounds 2 --variant half num_splits=$n --out $OUT/logs/half.jsonl --batch "$@" >> $OUT/logs/half.txt 2>&1; echo "ab $n exit $?"; }
ab 8 llama3-8b:1:5:65536 llama3-8b:1:6:65536 qwen-64-8:4:5:32768 qwen-64-8:4:6:65536 llama3-8b:1:4:65536
ab 4 llama3-8b:1:10:32768 llama3-8b:1:12:32768 llama3-8b:1:14:16384 llama3-8b:4:14:32768 qwen-64-8:1:12:65536 qwen-64-8:4:10:16384 qwen-64-8:4:14:16384 llama3-8b:1:8:32768 qwen-64-8:4:8:32768
ab 16 llama3-8b:1:3:131072 qwen-64-8:4:3:65536
ab 2 llama3-8b:1:24:32768 qwen-64-8:4:24:8192
ab 32 llama3-70b-tp8:1:10:8192 llama3-70b-tp8:1:12:8192 llama3-70b-tp8:4:12:131072
ab 64 llama3-70b-tp8:1:5:16384 llama3-70b-tp8:1:6:16384
python3 - <<'PY'
import json, math, os
controls = {"llama3-8b 1 4 65536", "llama3-8b 1 8 32768", "qwen-64-8 4 8 32768"}
logs = []
for line in open(os.environ["OUT"] + "/logs/half.jsonl"):
    r = json.loads(line)
    a, b = min(r["planned"]), min(r["half"])
    c = r["batch"] in controls
    if not c:
        logs.append(math.log(b / a))
    print(f'{r["batch"]:28s} default {a:8.1f} half {b:8.1f} {100*(b/a-1):+6.1f}% {"control" if c else ""} {r["plan planned"]} {r["plan half"]}')
print(f"half/default geomean {math.exp(sum(logs)/len(logs)):.4f} over {len(logs)}, half faster {sum(l < 0 for l in logs)}")
PY
