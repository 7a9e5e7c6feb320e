# Session 37, call 3: v0.2.39's narrow-rows merge slicing against the old one (run73_merge_ab.py
# on merge_cases.json), then the whole GPU suite. Logs go into $OUT as they run.
set -o pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 230 python3 run73_merge_ab.py > $OUT/logs/merge_ab.txt 2>&1; echo "ab exit $?"
cut -c1-400 $OUT/logs/merge_ab.txt | tail -50
timeout 300 python3 -m pytest tests -n 12 -q -p no:cacheprovider > $OUT/logs/gpu_suite.txt 2>&1; echo "suite exit $?" | tee -a $OUT/logs/gpu_suite.txt
tail -4 $OUT/logs/gpu_suite.txt
