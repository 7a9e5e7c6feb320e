# Session 38's next runs, for a later session (copy run81.sh and run81_gqa_next.py to the
# repository root; carry both). Predictions: docs/perf.md "Next runs (session 38)".
set -o pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 240 python3 run81_gqa_next.py > $OUT/logs/gqa_next.txt 2>&1; echo "next exit $?"
cut -c1-240 $OUT/logs/gqa_next.txt | tail -16
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" | tee -a $OUT/logs/memcheck.txt
tail -3 $OUT/logs/memcheck.txt
