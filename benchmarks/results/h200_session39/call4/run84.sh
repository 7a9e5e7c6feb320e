# Session 39, call 4: the wide GQA tile on 3 stages (run84_wide_stages.py).
set -o pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 240 python3 run84_wide_stages.py > $OUT/logs/wide_stages.txt 2>&1; echo "stages exit $?"
cut -c1-400 $OUT/logs/wide_stages.txt | tail -20
