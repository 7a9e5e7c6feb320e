# Session 44, call 7: v0.2.52's default one splits (16 rows, one kv head, 64-row half blocks)
# checked against the reference and through a CUDA-graph replay with new lengths
# (tests/test_gqa_gpu.py), beside memcheck of the same plans with corrupt page ids and lengths
# (tests/gpu_memcheck.py's default_one_splits alone).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -c "import torch, gpu_memcheck; gpu_memcheck.default_one_splits('cuda'); torch.cuda.synchronize(); print('one splits: all calls finished')" > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 170 python3 -m pytest tests/test_gqa_gpu.py -k one_split -n 4 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 4 $OUT/logs/pytest.txt
wait
tail -n 3 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
