# Session 64's first call (carry run211.sh and .peers; asks for an H200). On an H200 (~450 s):
# issue 5's standing at v0.2.75 (session 63's run207: MLA 12 heads qlen 1 / 2 / 4, ragged and
# one-long beside the Triton peer, then the cascade and the 6-group mix beside the plain
# kernel; the last H200 figures are session 34's), then session 63's run210 tests. On an H100
# (~330 s): session 63's run210 (the GPU tests of odd pages with the 32-row tile on 64-key
# blocks; the uniform 32-row rule as the default) and session 60's run188 (program times at
# 12 heads x qlen 4, piece costs 2 and 4). Predictions: docs/perf.md "Session 64: predictions
# for run211".
CALL_LIMIT=540
source tools/device_call.sh
PYTHONPATH=$PWD/src:$PWD/tests timeout 90 python3 -m pytest tests/test_any_page_size.py \
  -k "32_row or pages_that_blocks_cross" -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 1 $L/pytest.txt
if grep -q H200 "$L/gpu_env.txt"; then
  bench standing 170 --rep-ms 20 --providers splitkv,triton-peer --special --labels ragged 1x \
    --heads 12 --qlen 1 2 4
  fits 120 cascade && bench cascade 140 --rep-ms 20 --providers splitkv,splitkv-prefix \
    --special --labels 8x327600 48 --heads 12 --qlen 1
else
  fits 50 uniform && bench uniform 60 --heads 12 --context 8192 68096 --batch 8 48 --qlen 2 \
    --page-size 100 --no-warp-specialized --providers splitkv --rep-ms 5
  HELD=$(python3 -c "from splitkv.bench.ablations import wide_loop_held_out_shapes as w
print(*[s for s in w() if s.label.startswith('1x196608') and s.heads == 12][0].seq_lens)")
  for cost in 2 4; do
    fits 90 one_long$cost && { timeout 90 python3 tools/program_times.py --shape one-long \
      --heads 12 --qlen 4 --piece-cost $cost --out $L/one_long > $L/one_long_cost$cost.txt 2>&1
      echo "one-long cost $cost exit $?"; head -n 1 $L/one_long_cost$cost.txt; }
    fits 90 held$cost && { timeout 90 python3 tools/program_times.py --seq-lens $HELD \
      --heads 12 --qlen 4 --piece-cost $cost --out $L/held_out > $L/held_out_cost$cost.txt 2>&1
      echo "196,608 one-long cost $cost exit $?"; head -n 1 $L/held_out_cost$cost.txt; }
  done
fi
pack_logs
