# Session 57's second data call (carry run172.sh and .old_src). (1) Host time on one host, two
# trees alternating, two rounds: v0.2.61 (60cec55^, in .old_src/v61 with its own tool) against
# this tree, `tools/call_host_time.py --calls 500`. (2) qwen-64-8 at qlen 4 on 16,384 keys, the
# planner's long-split tile (3 stages, page ids ahead) against 8 uniform splits on the 2-stage
# tile (run165's s8), 2 rounds; (3) the long-split tile against the uniform 2-stage tile at the
# planner's own split count, on the 32-row head-dim-128 tiles that take it (qwen-64-8 and
# llama3-70b-tp8 at qlen 4, llama3-8b at qlen 8), 2 rounds. Predictions: docs/perf.md "Session 57: predictions for run172".
set -o pipefail
export PYTHONUNBUFFERED=1
L=$OUT/logs
mkdir -p $L
git rev-parse HEAD > $L/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $L/gpu_env.txt
for r in 1 2; do
  PYTHONPATH=$PWD/.old_src/v61/src timeout 100 python3 .old_src/v61/tools/call_host_time.py --calls 500 > $L/host_v61_r$r.txt 2>&1; echo "v61 round $r exit $? at ${SECONDS} s"
  PYTHONPATH=$PWD/src timeout 100 python3 tools/call_host_time.py --calls 500 > $L/host_head_r$r.txt 2>&1; echo "head round $r exit $? at ${SECONDS} s"
done
head -n 20 $L/host_*.txt
export PYTHONPATH=$PWD/src
Q="qwen-64-8:4:2:16384 qwen-64-8:4:3:16384 qwen-64-8:4:4:16384 qwen-64-8:4:5:16384 qwen-64-8:4:6:16384 qwen-64-8:4:7:16384 qwen-64-8:4:8:16384 qwen-64-8:4:4:32768"
timeout 200 python3 tools/gqa_plan_ab.py --rounds 2 --variant s8 num_splits=8 block_n=128 split_num_stages=2 page_prefetch=False --out $L/qwen.jsonl --batch $Q > /dev/null 2>$L/qwen.err; echo "qwen exit $? at ${SECONDS} s"
python3 tools/ab_summary.py $L/qwen.jsonl --plans | tee $L/qwen_summary.txt
grep WRONG $L/qwen.err || echo "qwen: every variant within the tolerance"
U="qwen-64-8:4:3:16384 qwen-64-8:4:6:16384 qwen-64-8:4:8:32768 qwen-64-8:4:2:65536 qwen-64-8:4:12:4096 qwen-64-8:4:16:16384 llama3-8b:8:4:32768 llama3-8b:8:8:16384 llama3-70b-tp8:4:4:65536 llama3-70b-tp8:4:12:32768 llama3-70b-tp8:4:32:16384 llama3-70b-tp8:4:2:131072"
timeout 220 python3 tools/gqa_plan_ab.py --rounds 2 --variant u num_splits=@planned block_n=128 split_num_stages=2 page_prefetch=False --out $L/long.jsonl --batch $U > /dev/null 2>$L/long.err; echo "long exit $? at ${SECONDS} s"
python3 tools/ab_summary.py $L/long.jsonl --plans | tee $L/long_summary.txt
grep WRONG $L/long.err || echo "long: every variant within the tolerance"
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
