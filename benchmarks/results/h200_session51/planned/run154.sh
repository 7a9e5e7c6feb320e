# Session 51, call 2: (1) the MLA 6-group mix's phases, this tree against v0.2.56's kernels;
# (2) Triton's launch path part by part; (3') the uniform GQA stage 1's real residency and half
# its split count on 6 more tiles, on v0.2.59 (.old_src/v59: the held-out test of the rule in
# splitkv/gqa_uniform_waves.py). Carry run154.sh, .old_src/v56 and .old_src/v59. Predictions: docs/perf.md
# "Session 51: call 2 predictions".
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
echo "== (3') residency and half the splits"
ab() { name=$1; shift; timeout 75 python3 .old_src/v59/tools/gqa_plan_ab.py --rounds 1 --variant half num_splits=@planned/2 kv_pack=@planned --builds $OUT/logs/builds_$name.jsonl --out $OUT/logs/half_$name.jsonl --batch "$@" > /dev/null 2>$OUT/logs/half_$name.err; echo "ab $name exit $?"; }
ab l8q1 llama3-8b:1:9:32768 llama3-8b:1:21:16384 llama3-8b:1:23:16384 llama3-8b:1:25:16384 llama3-8b:1:27:16384
ab l8q4 llama3-8b:4:9:32768 llama3-8b:4:21:16384 llama3-8b:4:6:65536 llama3-8b:4:25:16384 llama3-8b:4:7:32768
ab qwq4 qwen-64-8:4:21:16384 qwen-64-8:4:23:16384 qwen-64-8:4:25:16384 qwen-64-8:4:27:16384 qwen-64-8:4:29:16384
ab qwq8 qwen-64-8:8:9:16384 qwen-64-8:8:21:16384 qwen-64-8:8:3:65536 qwen-64-8:8:13:16384 qwen-64-8:8:29:16384
ab oss gpt-oss:1:17:32768 gpt-oss:1:19:32768 gpt-oss:1:21:32768 gpt-oss:1:12:65536 gpt-oss:1:27:16384
ab mha mha-32:1:9:16384 mha-32:1:5:16384 mha-32:1:11:16384 mha-32:1:3:32768 mha-32:1:7:16384
ab l70 llama3-70b-tp8:1:36:65536 llama3-70b-tp8:1:42:65536 llama3-70b-tp8:1:48:65536 llama3-70b-tp8:1:27:65536 llama3-70b-tp8:1:29:65536
python3 - <<'PY'
import glob, json, os
for path in sorted(glob.glob(os.environ["OUT"] + "/logs/builds_*.jsonl")):
    for line in open(path):
        b = json.loads(line)
        print(os.path.basename(path), "regs", b["regs"], "warps", b["warps"], "shared", b["shared"], "resident", b["resident"], b["key"][:150])
for path in sorted(glob.glob(os.environ["OUT"] + "/logs/half_*.jsonl")):
    for line in open(path):
        r = json.loads(line)
        a, b = r["planned"][0], r["half"][0]
        p = r["plan planned"]
        print(f'{r["batch"]:28s} default {a:8.1f} half {b:8.1f} {100*(b/a-1):+6.1f}%  {p} half {r["plan half"][1]}')
PY
echo "== (2) launch path"
timeout 90 python3 tools/launch_path_time.py --calls 500 --repeat 3 2>&1 | tee $OUT/logs/launch_path.txt; echo "launch_path exit $?"
echo "== (1) cascade phases"
timeout 90 python3 tools/cascade_phases.py --shapes mix 2>&1 | tee $OUT/logs/phases_new.txt; echo "phases exit $?"
for r in 1 2; do
  timeout 60 python3 tools/cascade_phases.py --kernels --shapes mix 2>&1 | grep -v Warn | tee $OUT/logs/kernels_new_$r.txt; echo "kernels new exit $?"
  PYTHONPATH=$PWD/.old_src/v56/src timeout 60 python3 tools/cascade_phases.py --kernels --shapes mix 2>&1 | grep -v Warn | tee $OUT/logs/kernels_v56_$r.txt; echo "kernels v56 exit $?"
done
