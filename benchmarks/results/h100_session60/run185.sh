# Session 60's third call, as it ran (inline, on run184's warm H100): memcheck at v0.2.71 after
# run184's own memcheck ran past its 240 s on a cold compile cache. (Now: `memcheck 330` of
# tools/device_call.sh.)
source tools/device_call.sh; PYTORCH_NO_CUDA_MEMORY_CACHING=1 PYTHONPATH=$PWD/src:$PWD/tests timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $L/memcheck.txt 2>&1; echo "memcheck exit $? at ${SECONDS} s"; tail -n 3 $L/memcheck.txt; pack_logs
