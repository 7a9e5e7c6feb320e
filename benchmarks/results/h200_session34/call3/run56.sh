# Session 34, call 3: memcheck with the refit schedule model (its plans route some memcheck
# cases differently), then the 124 ragged batches whose default the refit moves from the
# balanced schedule to uniform splits and that call 1 did not time.
steps=()
steps+=("250:memcheck:PYTHONUNBUFFERED=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py 2>&1 | tee \$STEP_OUT/memcheck.txt | tail -15")
steps+=("300:schedule_refit:python3 run56_schedule_refit.py")
bash tools/device_steps.sh "${steps[@]}"
