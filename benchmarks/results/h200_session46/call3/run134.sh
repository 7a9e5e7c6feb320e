# Session 46, call 3: v0.2.55 as it lands. Held out: v0.2.54 (.old_src/v54) against this tree
# on 24 seeded random GQA batches whose plan the two share (`python tools/gqa_random_batches.py
# .old_src/v54 --count 300 --seed 462 --most 0 --same 24`), 2 rounds; gpt-oss at qlen 4 ragged
# / one-long, 2 rounds a tree alternating; then the whole GPU suite beside the memcheck.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
SAME=$(cat benchmarks/results/h200_session46/call3/same.txt)
timeout 90 python3 .old_src/v54/tools/gqa_plan_ab.py --rounds 2 --batch $SAME --out $OUT/logs/same_v54.jsonl --builds $OUT/logs/builds_same_v54.jsonl > $OUT/logs/same_v54.txt 2>&1; echo "same v54 exit $?"
timeout 90 python3 tools/gqa_plan_ab.py --rounds 2 --batch $SAME --out $OUT/logs/same_v55.jsonl --builds $OUT/logs/builds_same_v55.jsonl > $OUT/logs/same_v55.txt 2>&1; echo "same v55 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/same_v54.jsonl $OUT/logs/same_v55.jsonl --names v54 v55
for round in 1 2; do for tree in v54 v55; do
  root=.old_src/$tree; [ $tree = v55 ] && root=.
  PYTHONPATH=$root/src timeout 40 python3 -m splitkv bench --kind gqa --special --labels ragged 1x --models gpt-oss --qlen 4 --providers splitkv --rep-ms 100 --out $OUT/logs/gptoss_q4_${tree}_$round.json > $OUT/logs/gptoss_q4_${tree}_$round.txt 2>&1; echo "gpt-oss q4 $tree $round exit $?"
  grep "p50" $OUT/logs/gptoss_q4_${tree}_$round.txt | cut -c1-120
done; done
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 8 $OUT/logs/pytest.txt
wait
tail -n 3 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
