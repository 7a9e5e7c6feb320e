# Session 59's second call (carry run179.sh; H100 or H200): (1) `splitkv bench --ablation
# loop_piece_cost_held_out`, v0.2.70's default piece cost (the H100's 4 on the 64-row Gluon
# loop; the H200 keeps 2) against costs 2 and 4 on 16 batches no cost was fitted on; (2)
# memcheck at v0.2.70 (its plans take the device's piece cost); (3) the ablation's round 2.
# Predictions: docs/perf.md "Session 59: predictions for run179". Logs come back as one archive.
source tools/device_call.sh
held_out() {  # round limit
  timeout $2 python3 -m splitkv bench --ablation loop_piece_cost_held_out --heads 12 16 32 64 \
    --rep-ms 30 --out $L/held$1 --tag held$1 > $L/held$1.txt 2>&1
  echo "held$1 exit $? at ${SECONDS} s"
  grep -E "^\[|p50|unsupported|wrong|crashed" $L/held$1.txt | cut -c1-110
}
held_out 1 200
fits 200 memcheck && {
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 PYTHONPATH=$PWD/src:$PWD/tests timeout 200 \
    compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py \
    > $L/memcheck.txt 2>&1
  echo "memcheck exit $? at ${SECONDS} s"
  tail -n 3 $L/memcheck.txt
}
fits 150 held2 && held_out 2 150
pack_logs
