# Session 36, call 3: the 80 seeded one-kv-head ragged batches on both schedules (the schedule
# model's choice with and without the session-36 rule), then the planner's GPU tests.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 300 python3 run68_one_kv_head_schedules.py 240 > $OUT/logs/one_kv_head.txt 2>&1; echo "cases exit $?"
tail -2 $OUT/logs/one_kv_head.txt | cut -c1-300
