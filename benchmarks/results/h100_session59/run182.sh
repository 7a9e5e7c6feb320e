# Session 59's fifth call (carry run182.sh): `splitkv bench --ablation alternate_piece_cost`,
# the Gluon loop's alternating consumers (two 64-row head blocks a request) at piece cost 4 (the
# default), 8, 12 and 16 in 32-key units; round 2 if it fits. Predictions: docs/perf.md
# "Session 59: predictions for run182". Logs come back as one archive.
CALL_LIMIT=400
source tools/device_call.sh
alternate() {  # round limit
  timeout $2 python3 -m splitkv bench --ablation alternate_piece_cost --heads 128 64 32 \
    --rep-ms 30 --out $L/alt$1 --tag alt$1 > $L/alt$1.txt 2>&1
  echo "alt$1 exit $? at ${SECONDS} s"
  grep -E "^\[|p50|unsupported|wrong|crashed" $L/alt$1.txt | cut -c1-100
}
alternate 1 220
fits 150 alt2 && alternate 2 150
pack_logs
