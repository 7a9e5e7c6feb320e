# Session 46, call 9: the 32-row one split's shared offsets from 1.5 programs an SM only;
# the tree before (.old_src/v55c, commit 8b6b59a) and this one alternating twice on call 8's
# batches; then the laid-out value cache test on the GPU.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
B="qwen-64-8:4:12:600 qwen-64-8:4:16:400 qwen-64-8:4:18:91-592 qwen-64-8:4:20:800 llama3-8b:8:12:500 llama3-8b:8:20:600 llama3-8b:8:24:400 qwen-64-8:4:22:1000 qwen-64-8:4:26:700 llama3-8b:8:28:100-1000 llama3-70b-tp8:4:120:500"
for round in 1 2; do
  timeout 50 python3 .old_src/v55c/tools/gqa_plan_ab.py --rounds 1 --batch $B --out $OUT/logs/v55c_$round.jsonl > $OUT/logs/v55c_$round.txt 2>&1; echo "v55c $round exit $?"
  timeout 50 python3 tools/gqa_plan_ab.py --rounds 1 --batch $B --out $OUT/logs/new_$round.jsonl > $OUT/logs/new_$round.txt 2>&1; echo "new $round exit $?"
done
python3 tools/gqa_ab_compare.py $OUT/logs/v55c_1.jsonl $OUT/logs/new_1.jsonl --names v55c new
python3 tools/gqa_ab_compare.py $OUT/logs/v55c_2.jsonl $OUT/logs/new_2.jsonl --names v55c new
PYTHONPATH=$PWD/src:$PWD/tests timeout 90 python3 -m pytest tests/test_gqa_decode.py tests/test_gqa_tile_rules.py -n 8 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 2 $OUT/logs/pytest.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
