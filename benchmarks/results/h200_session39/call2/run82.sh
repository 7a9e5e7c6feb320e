# Session 39, call 2: one-split GQA output against the merge (run82_whole_output.py), then
# the whole GPU suite.
set -o pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 230 python3 run82_whole_output.py > $OUT/logs/whole_output.txt 2>&1; echo "whole exit $?"
cut -c1-400 $OUT/logs/whole_output.txt | tail -60
timeout 330 python3 -m pytest tests -n 12 -q -p no:cacheprovider > $OUT/logs/pytest_gpu.txt 2>&1; echo "pytest exit $?"
tail -5 $OUT/logs/pytest_gpu.txt
