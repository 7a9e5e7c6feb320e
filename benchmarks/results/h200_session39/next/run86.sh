# Session 39, call 6: memcheck of v0.2.42's wide uniform GQA tiles (tests/gpu_memcheck.py's
# wide_uniform_tiles alone).
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -c "import torch, gpu_memcheck as m; torch.manual_seed(0); m.wide_uniform_tiles('cuda'); torch.cuda.synchronize(); print('wide tiles: all calls finished')" > $OUT/logs/memcheck_wide.txt 2>&1; echo "memcheck exit $?" | tee -a $OUT/logs/memcheck_wide.txt
tail -4 $OUT/logs/memcheck_wide.txt
