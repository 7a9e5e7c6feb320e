# Session 35, call 7: one group's balanced GQA grid stops at one wave (v0.2.37) against v0.2.36.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 150 python3 run64_gqa_grid_confirm_large.py > $OUT/logs/gqa_grid_confirm_large.txt 2>&1; echo "exit $?"
cut -c1-300 $OUT/logs/gqa_grid_confirm_large.txt
