# Session 59's fourth call (carry run181.sh): memcheck at v0.2.70 (run179's ran past its 200 s),
# with its plans taking the device's piece cost (4 on the H100's 64-row Gluon loop).
source tools/device_call.sh
PYTORCH_NO_CUDA_MEMORY_CACHING=1 PYTHONPATH=$PWD/src:$PWD/tests timeout 450 \
  compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py \
  > $L/memcheck.txt 2>&1
echo "memcheck exit $? at ${SECONDS} s"
tail -n 3 $L/memcheck.txt
pack_logs
