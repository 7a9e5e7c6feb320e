# Session 34, call 4 (v0.2.36): memcheck, then the whole GPU suite; both logs written into
# $OUT as they run, so a call cut at the session's device budget still returns them.
set -o pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" | tee -a $OUT/logs/memcheck.txt
tail -4 $OUT/logs/memcheck.txt
timeout 260 python3 -m pytest tests -n 12 -q -p no:cacheprovider > $OUT/logs/gpu_suite.txt 2>&1; echo "suite exit $?" | tee -a $OUT/logs/gpu_suite.txt
tail -6 $OUT/logs/gpu_suite.txt
