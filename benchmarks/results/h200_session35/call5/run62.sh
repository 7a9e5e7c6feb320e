# Session 35, call 5 (v0.2.37): the balanced GQA grid's rule against v0.2.36's on call 4's
# batches, then the whole GPU suite and memcheck; logs written into $OUT as they run.
set -o pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 100 python3 run62_gqa_grid_confirm.py > $OUT/logs/gqa_grid_confirm.txt 2>&1; echo "confirm exit $?"
tail -3 $OUT/logs/gqa_grid_confirm.txt | cut -c1-400
timeout 230 python3 -m pytest tests -n 12 -q -p no:cacheprovider > $OUT/logs/gpu_suite.txt 2>&1; echo "suite exit $?" | tee -a $OUT/logs/gpu_suite.txt
tail -4 $OUT/logs/gpu_suite.txt
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 235 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" | tee -a $OUT/logs/memcheck.txt
tail -4 $OUT/logs/memcheck.txt
