# Session 57 (carry run175.sh; an H100): v0.2.69 held out. On the H100 preset the 32-row
# head-dim-128 GQA tile keeps the uniform tile (128-key blocks, 2 stages) at the long-split
# count where two requests or more split into 2,048 keys or more (`gqa_plan_tile.
# keeps_uniform_tile`); `old` is the long-split tile at the same count (v0.2.68's plan). Then
# the plan's CPU tests and the GQA GPU tests of the 32-row tiles. Predictions: docs/perf.md
# "Session 57: v0.2.69".
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
L=$OUT/logs
mkdir -p $L
git rev-parse HEAD > $L/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $L/gpu_env.txt
B="qwen-64-8:4:2:32768 qwen-64-8:4:5:16384 qwen-64-8:4:8:8192 qwen-64-8:4:10:8192 llama3-8b:8:2:65536 llama3-8b:8:16:4096 llama3-8b:8:5:16384 llama3-70b-tp8:4:10:65536 llama3-70b-tp8:4:20:32768 llama3-70b-tp8:4:48:16384 llama3-70b-tp8:4:40:16384 qwen-64-8:4:24:4096 qwen-64-8:4:1:32768"
timeout 90 python3 tools/gqa_plan_ab.py --rounds 2 --variant old block_n=64 split_num_stages=3 page_prefetch=True --out $L/v69.jsonl --batch $B > /dev/null 2>$L/v69.err; echo "v69 exit $? at ${SECONDS} s"
python3 tools/ab_summary.py $L/v69.jsonl --plans | tee $L/v69_summary.txt
grep WRONG $L/v69.err || echo "every variant within the tolerance"
timeout 80 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_gqa_plan_tile.py tests/test_gqa_gpu.py -k "plan_tile or long_split" > $L/tests.txt 2>&1; echo "tests exit $? at ${SECONDS} s"; tail -2 $L/tests.txt
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
