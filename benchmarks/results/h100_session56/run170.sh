# Planned in session 56 for an H200 (carry it as run170.sh; on an H100 it repeats run166-167's
# and run165's figures, still a check of v0.2.66-67 against the plans they replaced). v0.2.66's
# pack on the unpacked one split's grid (against kv_pack=1) and v0.2.67's halving of gpt-oss's
# 64-row tile (against num_splits=@planned*2), each variant checked against the fp32 reference
# by the tool. Predictions: docs/perf.md "Session 56: predictions for run170".
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $OUT/logs/gpu_env.txt
PACK="gpt-oss:1:36:32768 gpt-oss:1:48:32768 gpt-oss:1:64:32768 gpt-oss:1:48:8192 gpt-oss:1:26:8192 gpt-oss:1:52:65536 gpt-oss:1:117:32768"
HALF="gpt-oss:8:18:32768 gpt-oss:8:42:4000 gpt-oss:8:44:32768 gpt-oss:8:6:65536 gpt-oss:8:28:32768 gpt-oss:8:16:32768"
timeout 200 python3 tools/gqa_plan_ab.py --rounds 2 --variant v65 kv_pack=1 --out $OUT/logs/pack.jsonl --batch $PACK > /dev/null 2>$OUT/logs/pack.err; echo "pack exit $?"
timeout 200 python3 tools/gqa_plan_ab.py --rounds 2 --variant v66 num_splits=@planned*2 --out $OUT/logs/half.jsonl --batch $HALF > /dev/null 2>$OUT/logs/half.err; echo "half exit $?"
for f in pack half; do python3 tools/ab_summary.py $OUT/logs/$f.jsonl --plans | tee $OUT/logs/${f}_summary.txt; grep WRONG $OUT/logs/$f.err; done
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
