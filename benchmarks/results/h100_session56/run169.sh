# Session 56's call 8 (carry run169.sh): v0.2.67's halving of gpt-oss's 64-row tile at qlen 8
# past one wave (GQA_UNIFORM_RESIDENCY (64, 64, 1, False): 4) on held-out batches against the
# plan v0.2.66 gave them (twice the splits), each variant checked against the fp32 reference
# by the tool first, then its GPU test. Predictions: docs/perf.md "Session 56: v0.2.67".
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
H="gpt-oss:8:34:8192 gpt-oss:8:50:16384 gpt-oss:8:57:4000 gpt-oss:8:22:16384 gpt-oss:8:27:65536 gpt-oss:8:13:32768 gpt-oss:8:9:1000 gpt-oss:8:7:65536 gpt-oss:8:5:2048 gpt-oss:8:3:131072"
timeout 150 python3 tools/gqa_plan_ab.py --rounds 2 --variant v66 num_splits=@planned*2 --out $OUT/logs/heldout.jsonl --batch $H > /dev/null 2>$OUT/logs/heldout.err; echo "heldout exit $?"
python3 tools/ab_summary.py $OUT/logs/heldout.jsonl --plans | tee $OUT/logs/heldout_summary.txt
grep WRONG $OUT/logs/heldout.err || echo "every variant within the tolerance"
timeout 60 python3 -m pytest -q -p no:cacheprovider -n 4 tests/test_gqa_gpu.py -k "halved_past_a_wave" > $OUT/logs/tests.txt 2>&1; echo "tests exit $?"; tail -2 $OUT/logs/tests.txt
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
