# Next session, call 1 (v0.2.37): the ragged GQA batches the schedule-model patch moves, on both
# schedules; then the whole GPU suite and memcheck at v0.2.37's final grid rule (session 35's
# last change came after its suite). Copy this file, run66_gqa_model_cases.py and
# gqa_model_cases.json to the repository root; carry run66.sh and run66_gqa_model_cases.py.
# Logs are written into $OUT as they run. Predictions: docs/perf.md "Next runs (session 35)".
set -o pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 110 python3 run66_gqa_model_cases.py > $OUT/logs/gqa_model_cases.txt 2>&1; echo "cases exit $?"
cut -c1-300 $OUT/logs/gqa_model_cases.txt
timeout 230 python3 -m pytest tests -n 12 -q -p no:cacheprovider > $OUT/logs/gpu_suite.txt 2>&1; echo "suite exit $?" | tee -a $OUT/logs/gpu_suite.txt
tail -4 $OUT/logs/gpu_suite.txt
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 235 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" | tee -a $OUT/logs/memcheck.txt
tail -4 $OUT/logs/memcheck.txt
