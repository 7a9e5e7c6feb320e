# Planned in session 55 (carry run163.sh). Two calls, each within the 600 s limit:
#   PART=suite bash run163.sh   the GPU suite on v0.2.65+ with each failure logged as it
#                               happens (h100_session55/report_failures.py); on an H100 the
#                               suite needs more than 430 s at -n 10.
#   PART=graphs bash run163.sh  v0.2.65's graph plans (GQA, no lengths: balanced from two
#                               requests) against the uniform plan v0.2.63 gave them, on the
#                               batches session 55 left unmeasured, beside memcheck.
# Predictions: docs/perf.md "Session 55: predictions for run163".
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $OUT/logs/gpu_env.txt
if [ "${PART:-graphs}" = suite ]; then
  PYTHONPATH=$PWD/src:$PWD/tests:$PWD/benchmarks/results/h100_session55 timeout 560 python3 -m pytest tests -n 10 -q -p report_failures -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
  tail -n 3 $OUT/logs/pytest.txt
  grep "^FAILED" $OUT/logs/failures.txt 2>/dev/null | head -20
  exit 0
fi
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 PYTHONPATH=$PWD/src:$PWD/tests timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 400 python3 tools/gqa_plan_ab.py --rounds 2 --no-lengths --variant uniform schedule=uniform --out $OUT/logs/graphs.jsonl --batch gpt-oss:4:48:4000 gpt-oss:1:160:100-1500 gpt-oss:1:160:1500 gpt-oss:1:256:100-2000 llama3-8b:1:128:100-2000 llama3-8b:1:128:2000 gpt-oss:1:64:100-32768 gpt-oss:1:64:32768 > /dev/null 2>$OUT/logs/graphs.err; echo "graphs exit $?"
python3 - <<'PY'
import json, os
path = os.environ["OUT"] + "/logs/graphs.jsonl"
for line in open(path) if os.path.exists(path) else []:
    r = json.loads(line)
    a, b = min(r["planned"]), min(r["uniform"])
    print(f'{r["batch"]:28s} graph plan {a:8.1f} uniform {b:8.1f} ({100*(b/a-1):+6.1f}%)  {r["plan planned"]} {r["plan uniform"]}')
PY
tail -3 $OUT/logs/graphs.err
wait
tail -n 3 $OUT/logs/memcheck.txt
