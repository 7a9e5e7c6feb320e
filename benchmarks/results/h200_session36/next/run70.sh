# Session 37, call 1 (prepared in session 36): GQA short-request batches at qlen 4. Copy this
# file, run70_gqa_short_batch.py, short_batch_lengths.json and llama3_8b_short.txt to the
# repository root; carry run70.sh and run70_gqa_short_batch.py. Logs go into $OUT as they run.
# Predictions: docs/perf.md "Next runs (session 36)" item 1.
set -o pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 150 python3 run70_gqa_short_batch.py > $OUT/logs/grids.txt 2>&1; echo "grids exit $?"
cut -c1-200 $OUT/logs/grids.txt
L=$(cat llama3_8b_short.txt)
for sched in balanced uniform; do
  STEP_OUT=$OUT/logs timeout 120 bash tools/ncu_kernel.sh short_$sched "gqa_(balanced|split)_kernel" --kind gqa --model llama3-8b --qlen 4 --seq-lens $L --schedule $sched --calls 2 > $OUT/logs/ncu_short_$sched.txt 2>&1; echo "ncu $sched exit $?"
done
STEP_OUT=$OUT/logs timeout 120 bash tools/ncu_kernel.sh ragged_balanced "gqa_(balanced|split)_kernel" --kind gqa --model llama3-8b --qlen 4 --seq-lens 1 63 64 65 4096 4097 32768 131072 --schedule balanced --calls 2 > $OUT/logs/ncu_ragged_balanced.txt 2>&1; echo "ncu ragged exit $?"
grep -h -E "Duration|DRAM Throughput|Achieved Occupancy|sm__cycles_active|No Eligible" $OUT/logs/ncu_*.txt | head -40
