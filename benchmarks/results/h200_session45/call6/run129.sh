# Session 45, call 6: v0.2.54's three steps at 16 rows and head dim 128 held out (v0.2.54 as
# committed before them, .old_src/v54d, against this tree, each its own default, 2 rounds):
# 12 targeted changed plans and the seeded random ones (`python tools/gqa_random_batches.py
# .old_src/v54d --count 1500 --seed 46`: 2 changed, 3 unchanged controls); then
# tests/test_gqa_gpu.py.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
HM="qwen-64-8:1:12:450 llama3-8b:2:12:600 llama3-70b-tp8:1:94:500 llama3-70b-tp8:2:96:560 qwen-64-8:2:12:400 llama3-8b:1:12:620 llama3-70b-tp8:1:95:150-600 llama3-8b:4:12:300-640 llama3-70b-tp8:1:97:421 llama3-70b-tp8:1:98:640 qwen-64-8:1:12:512 llama3-8b:4:12:531"
RM="llama3-8b:4:12:584 llama3-8b:2:12:465 gpt-oss:8:10:1036 llama3-8b:1:9:213-636 gpt-oss:2:26:480"
timeout 60 python3 .old_src/v54d/tools/gqa_plan_ab.py --rounds 2 --batch $HM $RM --out $OUT/logs/v54d.jsonl > $OUT/logs/v54d.txt 2>&1; echo "v54d exit $?"
timeout 60 python3 tools/gqa_plan_ab.py --rounds 2 --batch $HM $RM --out $OUT/logs/v54.jsonl > $OUT/logs/v54.txt 2>&1; echo "v54 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/v54d.jsonl $OUT/logs/v54.jsonl --names v54d v54
export PYTHONPATH=$PWD/src:$PWD/tests
timeout 150 python3 -m pytest tests/test_gqa_gpu.py -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 3 $OUT/logs/pytest.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
