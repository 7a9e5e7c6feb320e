# Session 46, call 2: (b) the residency table, v55a (.old_src/v55a: this kernel, the old
# table) against this tree on 32 of the 91 changed seeded random plans and 4 unchanged
# controls (`python tools/gqa_random_batches.py .old_src/v55a --count 1500 --seed 46 --most
# 32`), 2 rounds; (c) v0.2.54 (.old_src/v54) against this tree on 24 seeded random batches
# whose plan the two share (`python tools/gqa_random_batches.py .old_src/v54 --count 300
# --seed 461 --most 0 --same 24`), 2 rounds, with the GPU's builds.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
D=benchmarks/results/h200_session46/call1
CH=$(cat $D/changed.txt); SAME=$(cat $D/same.txt)
timeout 110 python3 .old_src/v55a/tools/gqa_plan_ab.py --rounds 2 --batch $CH --out $OUT/logs/changed_v55a.jsonl > $OUT/logs/changed_v55a.txt 2>&1; echo "changed v55a exit $?"
timeout 110 python3 tools/gqa_plan_ab.py --rounds 2 --batch $CH --out $OUT/logs/changed_v55.jsonl --builds $OUT/logs/builds_changed_v55.jsonl > $OUT/logs/changed_v55.txt 2>&1; echo "changed v55 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/changed_v55a.jsonl $OUT/logs/changed_v55.jsonl --names v55a v55
timeout 90 python3 .old_src/v54/tools/gqa_plan_ab.py --rounds 2 --batch $SAME --out $OUT/logs/same_v54.jsonl --builds $OUT/logs/builds_same_v54.jsonl > $OUT/logs/same_v54.txt 2>&1; echo "same v54 exit $?"
timeout 90 python3 tools/gqa_plan_ab.py --rounds 2 --batch $SAME --out $OUT/logs/same_v55.jsonl --builds $OUT/logs/builds_same_v55.jsonl > $OUT/logs/same_v55.txt 2>&1; echo "same v55 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/same_v54.jsonl $OUT/logs/same_v55.jsonl --names v54 v55
cd $OUT && tar czf logs.tgz logs && rm -rf logs
