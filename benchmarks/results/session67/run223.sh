# Session 67 (carry run223.sh; either GPU, ~300 s): where the gathering producer's warps wait at
# 128 heads x qlen 1 on the ragged batch, page 1 against page 100 (ncu's per-instruction stall
# samples, `tools/ncu_stalls.py`), with the tree's four producer warps. Predictions: docs/perf.md
# "Session 67: predictions for run223".
CALL_LIMIT=570
source tools/device_call.sh
RAGGED="--seq-lens 1 63 64 65 4096 4097 65536 327600 --heads 128 --qlen 1"
for page in 1 100; do
  fits 150 ncu_p$page && STEP_OUT=$L/ncu NCU_SOURCE=1 timeout 200 bash tools/ncu_kernel.sh \
    ragged_h128_p$page warp_specialized $RAGGED --page-size $page > $L/ncu_p$page.txt 2>&1
  grep -E "Duration|Registers|DRAM Throughput|issue_stalled_(long|lg|short|wait|barrier|membar|mio)" \
    $L/ncu_p$page.txt | head -14
  python3 tools/ncu_stalls.py $L/ncu/ragged_h128_p${page}_sass.csv > $L/stalls_p$page.txt 2>&1
  head -40 $L/stalls_p$page.txt
done
rm -f $L/ncu/*.ncu-rep
pack_logs
