# Session 57's last call (carry run174.sh): the long-split tile (3 stages, 32 KB key blocks,
# page ids ahead) on every GQA tile height that takes it, multi-request batches, against (off)
# the planner's plan without the rule (`tools/gqa_plan_ab.py` long_split=False: the fill rule's
# count on the uniform tile) and (u2) the uniform tile at the long-split count. Predictions:
# docs/perf.md "Session 57: predictions for run174".
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
L=$OUT/logs
mkdir -p $L
git rev-parse HEAD > $L/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $L/gpu_env.txt
B="llama3-70b-tp8:1:8:32768 llama3-70b-tp8:1:16:65536 llama3-70b-tp8:2:16:32768 llama3-8b:1:2:65536 llama3-8b:1:4:32768 llama3-8b:2:4:32768 qwen-64-8:2:4:32768 gpt-oss:1:4:32768 gpt-oss:2:4:32768 gpt-oss:4:4:32768 gpt-oss:4:8:16384 gpt-oss:8:4:32768 gpt-oss:8:3:65536 qwen-64-8:4:3:32768 qwen-64-8:4:6:8192 llama3-8b:8:3:32768 llama3-8b:8:6:16384 llama3-70b-tp8:4:16:32768 llama3-70b-tp8:8:8:32768"
timeout 240 python3 tools/gqa_plan_ab.py --rounds 2 --variant off long_split=False --variant u2 num_splits=@planned kv_pack=@planned block_n=@off split_num_stages=2 page_prefetch=False --out $L/survey.jsonl --batch $B > /dev/null 2>$L/survey.err; echo "survey exit $? at ${SECONDS} s"
python3 tools/ab_summary.py $L/survey.jsonl --plans | tee $L/survey_summary.txt
grep WRONG $L/survey.err || echo "every variant within the tolerance"
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
