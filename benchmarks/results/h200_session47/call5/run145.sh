# Session 47, call 5: v0.2.56 as it lands (the one-split rounds rule after call 3's suite):
# issue 5's gpt-oss qlen 1 special batches, then the whole GPU suite beside the memcheck.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
export PYTHONPATH=$PWD/src:$PWD/tests
timeout 60 python3 -m splitkv bench --kind gqa --special --labels ragged 1x --models gpt-oss --qlen 1 --providers splitkv --out $OUT/logs/special > $OUT/logs/special.txt 2>&1; echo "special exit $?"
grep "p50" $OUT/logs/special.txt | cut -c1-140
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 4 $OUT/logs/pytest.txt
wait
tail -n 3 $OUT/logs/memcheck.txt
rm -rf $OUT/logs/special
