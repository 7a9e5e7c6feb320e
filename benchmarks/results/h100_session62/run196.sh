# Session 62, v0.2.73 (carry run196.sh; either GPU): the Gluon GPU tests with the H100's
# 16-row copies, `--ablation copy_rows_held_out` in two rounds, and ncu of the Triton balanced
# tile at pages 4 and 100. Predictions: docs/perf.md "Session 62: predictions for run196".
source tools/device_call.sh
PYTHONPATH=$PWD/src:$PWD/tests timeout 150 python3 -m pytest tests/test_warp_specialized.py \
  tests/test_any_page_size.py -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 1 $L/pytest.txt; grep "^FAILED" $L/pytest.txt | head
for round in 1 2; do
  fits 150 r$round && bench r$round $((CALL_LIMIT - SECONDS - 90)) --ablation copy_rows_held_out \
    --rep-ms 15
done
RAGGED="--seq-lens 1 63 64 65 4096 4097 65536 327600 --heads 12 --qlen 4 --no-warp-specialized"
for page in 4 100; do
  fits 40 ncu_p$page && STEP_OUT=$L/ncu timeout 60 bash tools/ncu_kernel.sh ragged_q4_p$page \
    mla_balanced $RAGGED --page-size $page > $L/ncu_p$page.txt 2>&1
  grep -E "Duration|Registers|Local|issue_stalled_(long|lg|short|wait)" $L/ncu_p$page.txt | head -12
done
rm -f $L/ncu/*.ncu-rep
pack_logs
