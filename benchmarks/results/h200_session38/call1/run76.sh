# Session 38, call 1: the 8-kv-head ragged GQA batches on both schedules (whole call, stage 1,
# merge), then ncu of gpt-oss's stage 1 at 4k x 128, qlen 4 (one split, 63.8% of the ceiling).
# Logs go into $OUT as they run. Predictions: docs/perf.md "Session 38: predictions first".
set -o pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 340 python3 run76_gqa_schedules.py 300 > $OUT/logs/schedules.txt 2>&1; echo "schedules exit $?"
wc -l $OUT/logs/gqa_schedules.jsonl
for q in 4 1; do
  STEP_OUT=$OUT/logs timeout 100 bash tools/ncu_kernel.sh gptoss_q$q "gqa_split_kernel" --kind gqa --model gpt-oss --qlen $q --context 4096 --batch 128 --calls 2 > $OUT/logs/ncu_gptoss_q$q.txt 2>&1; echo "ncu q$q exit $?"
done
grep -h -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|No Eligible|Issued Ipc" $OUT/logs/ncu_gptoss_q*.txt
cd $OUT/logs && tar czf ncu_reps.tgz *.ncu-rep *_raw.csv && rm -f *.ncu-rep *_raw.csv
