# Session 58's second call (carry run178.sh): `splitkv bench --ablation loop_piece_cost`, the
# Gluon program loop's piece cost 2-8 on its 64-row head blocks (one a request) (run177: 4-8 ahead of the
# default 2 at 12 heads x qlen 4 on the H100), one round. Predictions: docs/perf.md "Session
# 58: predictions for run178". Logs come back as one archive.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
L=$OUT/logs
mkdir -p $L
git rev-parse HEAD > $L/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $L/gpu_env.txt
fits() { [ $((SECONDS + $1)) -lt 580 ] || { echo "skipped $2 at ${SECONDS} s"; return 1; }; }
cost_ablation() {  # round timeout
  timeout $2 python3 -m splitkv bench --ablation loop_piece_cost --heads 12 16 32 64 128 --rep-ms 30 --out $L/cost$1 --tag cost$1 > $L/cost$1.txt 2>&1; echo "cost$1 exit $? at ${SECONDS} s"
  grep -E "^\[|p50|unsupported|wrong|crashed" $L/cost$1.txt | cut -c1-110
}
# The first attempt (one round of 7 costs, then a second) lost the machine mid-call, with no
# logs back, and three more found none: one round of 4 costs on the one-head-block shapes,
# within 200 s (12 and 16 heads x qlen 4, the seeded batches first), each shape's rows kept
# as it ends.
cost_ablation 1 200
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
