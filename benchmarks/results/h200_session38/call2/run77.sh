# Session 38, call 2: v0.2.41 (merge_rows; the schedule model's balanced grid) against HEAD
# (.old_src), then the changed schedule choices. Predictions: docs/perf.md "Session 38".
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
for r in 1 2; do
  PYTHONPATH=$PWD/.old_src/src STEP_OUT=$OUT/logs timeout 150 python3 run77_merge_ab.py old_r$r > $OUT/logs/ab_old_r$r.txt 2>&1; echo "old r$r exit $?"
  PYTHONPATH=$PWD/src STEP_OUT=$OUT/logs timeout 150 python3 run77_merge_ab.py new_r$r > $OUT/logs/ab_new_r$r.txt 2>&1; echo "new r$r exit $?"
done
PYTHONPATH=$PWD/src STEP_OUT=$OUT/logs timeout 200 python3 run77_schedules.py 100 > $OUT/logs/schedules.txt 2>&1; echo "schedules exit $?"
tail -3 $OUT/logs/ab_*.txt | cut -c1-200
wc -l $OUT/logs/*.jsonl
