# Session 55, after run160 (H100): (a) item (c)'s last batch alone, again and with
# CUDA_LAUNCH_BLOCKING=1; (b) oob_probe.py under compute-sanitizer memcheck; (c) the GPU suite
# with a longer limit (run160's stopped at 98% after 280 s on the H100) and its failures named.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $OUT/logs/gpu_env.txt
(PYTHONPATH=$PWD/src:$PWD/tests timeout 430 python3 -m pytest tests -n 10 -q -rfE -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?" >> $OUT/logs/pytest.txt) &
AB="tools/gqa_plan_ab.py --rounds 1 --no-lengths --variant half num_splits=@planned/2 kv_pack=@planned --variant bal schedule=balanced --batch gpt-oss:4:48:4000"
timeout 90 python3 $AB --out $OUT/logs/repro.jsonl > /dev/null 2> $OUT/logs/repro.err; echo "repro exit $?"
grep -v IndexKernel $OUT/logs/repro.err | tail -4; grep -c IndexKernel $OUT/logs/repro.err
CUDA_LAUNCH_BLOCKING=1 timeout 90 python3 $AB --out $OUT/logs/repro_blocking.jsonl > /dev/null 2> $OUT/logs/repro_blocking.err; echo "repro blocking exit $?"
grep -v IndexKernel $OUT/logs/repro_blocking.err | tail -25; grep -c IndexKernel $OUT/logs/repro_blocking.err
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 python3 benchmarks/results/h100_session55/oob_probe.py > $OUT/logs/probe_memcheck.txt 2>&1; echo "probe memcheck exit $?"
grep -v "^=========     " $OUT/logs/probe_memcheck.txt | head -30
wait
tail -n 25 $OUT/logs/pytest.txt
