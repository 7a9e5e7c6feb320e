# Session 57's third data call (carry run173.sh): the long-split tile (3 stages, 64-key blocks,
# page ids ahead) against the uniform 2-stage 128-key tile at the planner's split count, by
# the split's length (512-4,096 keys) on the 32-row head-dim-128 tiles: run172 had the
# uniform tile ahead by 3.2-6.6% where splits held 4,096 keys and behind by 2-3% at 1,024.
# Predictions: docs/perf.md "Session 57: predictions for run173".
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
L=$OUT/logs
mkdir -p $L
git rev-parse HEAD > $L/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $L/gpu_env.txt
B="qwen-64-8:4:1:16384 llama3-70b-tp8:4:32:4096 llama3-70b-tp8:4:4:65536 llama3-70b-tp8:4:16:16384 llama3-8b:8:6:4096 llama3-70b-tp8:4:8:65536 qwen-64-8:4:1:65536 llama3-8b:8:12:4096 qwen-64-8:4:16:4096 llama3-70b-tp8:4:16:65536 llama3-70b-tp8:4:24:32768 llama3-70b-tp8:4:32:32768 qwen-64-8:4:1:131072 llama3-8b:8:1:131072"
timeout 300 python3 tools/gqa_plan_ab.py --rounds 2 --variant u num_splits=@planned block_n=128 split_num_stages=2 page_prefetch=False --out $L/split_keys.jsonl --batch $B > /dev/null 2>$L/split_keys.err; echo "split_keys exit $? at ${SECONDS} s"
python3 tools/ab_summary.py $L/split_keys.jsonl --plans | tee $L/split_keys_summary.txt
grep WRONG $L/split_keys.err || echo "every variant within the tolerance"
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
