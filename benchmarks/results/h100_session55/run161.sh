# Session 55, after run160 (H100) and v0.2.64 (cuda_graph_times_us waits for the caller's
# stream): (a) item (c)'s last batch again (gpt-oss qlen 4, 48 x 4,000, planned without
# lengths), which died in run160 on a device-side index assert; (b) oob_probe.py (that batch's
# three plans, eager and replayed, against the reference) under compute-sanitizer memcheck;
# (c) the GPU suite with a longer limit (run160's stopped at 98% after 280 s on the H100, one
# F) and its failures named.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $OUT/logs/gpu_env.txt
(PYTHONPATH=$PWD/src:$PWD/tests timeout 430 python3 -m pytest tests -n 10 -q -rfE -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?" >> $OUT/logs/pytest.txt) &
timeout 120 python3 tools/gqa_plan_ab.py --rounds 2 --no-lengths --variant half num_splits=@planned/2 kv_pack=@planned --variant bal schedule=balanced --batch gpt-oss:4:48:4000 --out $OUT/logs/graph.jsonl > /dev/null 2> $OUT/logs/graph.err; echo "graph exit $?"
grep -v IndexKernel $OUT/logs/graph.err | tail -4; grep -c IndexKernel $OUT/logs/graph.err
cat $OUT/logs/graph.jsonl
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 python3 benchmarks/results/h100_session55/oob_probe.py > $OUT/logs/probe_memcheck.txt 2>&1; echo "probe memcheck exit $?"
grep -v "^=========     " $OUT/logs/probe_memcheck.txt | head -30
wait
tail -n 25 $OUT/logs/pytest.txt
