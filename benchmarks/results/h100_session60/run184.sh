# Session 60's second call (carry run184.sh): v0.2.71's held-out check on the alternating
# consumers (predictions: docs/perf.md "Session 60: predictions for run184"), then memcheck.
# On an H200 (whose default stays 4 units there): one round of it, and the 64-row loop's cost
# (run183's H200 part, "Next runs (session 59)" item 2).
CALL_LIMIT=560
source tools/device_call.sh
HELD="--ablation alternate_piece_cost_held_out --heads 128 64 32 --rep-ms 30"
bench held1 150 $HELD
if grep -q H200 $L/gpu_env.txt; then
  fits 150 cost && bench cost 150 --ablation loop_piece_cost --heads 12 16 32 64 --rep-ms 30
else
  fits 150 held2 && bench held2 150 $HELD
fi
if fits 240 memcheck; then
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 PYTHONPATH=$PWD/src:$PWD/tests timeout 240 \
    compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py \
    > $L/memcheck.txt 2>&1
  echo "memcheck exit $? at ${SECONDS} s"
  tail -n 3 $L/memcheck.txt
fi
pack_logs
