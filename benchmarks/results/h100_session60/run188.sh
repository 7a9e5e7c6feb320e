# Planned in session 60 for a later session (carry run188.sh; ~120 s on either GPU): each
# program's start and end (tools/program_times.py, the Gluon program loop's global-timer
# stamps) at 12 heads x qlen 4 on the two one-long batches whose piece-cost results differ
# (327,600 beside 47: cost 4 2.3% faster than 2 on the H100; 196,608 beside 31, run179's
# seed 59: 0.7-0.9% slower), at costs 2 and 4: which programs end last, and does the higher
# cost move them? docs/perf.md "Next runs (session 60)" item 2.
CALL_LIMIT=300
source tools/device_call.sh
HELD=$(python3 -c "from splitkv.bench.ablations import wide_loop_held_out_shapes as w
print(*[s for s in w() if s.label.startswith('1x196608') and s.heads == 12][0].seq_lens)")
for cost in 2 4; do
  timeout 100 python3 tools/program_times.py --shape one-long --heads 12 --qlen 4 \
    --piece-cost $cost --out $L/one_long > $L/one_long_cost$cost.txt 2>&1
  echo "one-long cost $cost exit $?"; head -n 1 $L/one_long_cost$cost.txt
  timeout 100 python3 tools/program_times.py --seq-lens $HELD --heads 12 --qlen 4 \
    --piece-cost $cost --out $L/held_out > $L/held_out_cost$cost.txt 2>&1
  echo "196,608 one-long cost $cost exit $?"; head -n 1 $L/held_out_cost$cost.txt
done
pack_logs
