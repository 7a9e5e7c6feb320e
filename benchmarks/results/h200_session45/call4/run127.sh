# Session 45, call 4: v0.2.54 as it lands held out, each tree's default (v0.2.53's tree,
# .old_src/v53, and this one), 2 rounds: 13 targeted changed plans and 24 seeded random ones
# (`python tools/gqa_random_batches.py .old_src/v53 --count 1500 --seed 45`, 4 unchanged
# controls) and one unchanged ragged control; then tests/test_gqa_gpu.py.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
T="llama3-8b:8:11:300 qwen-64-8:4:10:380 llama3-8b:8:10:150-350 qwen-64-8:4:11:100-384 llama3-8b:8:11:192 qwen-64-8:1:10:300 llama3-8b:2:11:384 llama3-70b-tp8:1:88:200 llama3-70b-tp8:2:80:350 llama3-70b-tp8:1:86:100-380 qwen-64-8:1:11:50-300 gpt-oss:1:11:400 gpt-oss:2:10:1000 gpt-oss:1:11:100-1000"
R="gpt-oss:1:12:1706 llama3-8b:4:12:531 qwen-64-8:4:11:171 gpt-oss:1:10:186 gpt-oss:4:11:557 gpt-oss:1:12:1304 gpt-oss:1:12:195-1596 gpt-oss:2:12:140-1986 gpt-oss:2:10:153 qwen-64-8:4:11:274 qwen-64-8:1:12:124-614 qwen-64-8:1:12:563 gpt-oss:2:10:607 qwen-64-8:2:11:268 gpt-oss:2:12:1610 qwen-64-8:1:12:489 gpt-oss:1:11:955 gpt-oss:1:12:242-770 llama3-8b:4:10:119 gpt-oss:1:10:413 llama3-70b-tp8:2:92:150 gpt-oss:1:12:1711 gpt-oss:4:11:403 gpt-oss:1:12:121-1461 qwen-64-8:8:39:205-1792 gpt-oss:1:38:195-877 qwen-64-8:1:12:128-1192 llama3-70b-tp8:1:268:79-410"
timeout 100 python3 .old_src/v53/tools/gqa_plan_ab.py --rounds 2 --batch $T $R --out $OUT/logs/v53.jsonl > $OUT/logs/v53.txt 2>&1; echo "v53 exit $?"
timeout 100 python3 tools/gqa_plan_ab.py --rounds 2 --batch $T $R --out $OUT/logs/v54.jsonl > $OUT/logs/v54.txt 2>&1; echo "v54 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/v53.jsonl $OUT/logs/v54.jsonl --names v53 v54
export PYTHONPATH=$PWD/src:$PWD/tests
timeout 200 python3 -m pytest tests/test_gqa_gpu.py -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 4 $OUT/logs/pytest.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
