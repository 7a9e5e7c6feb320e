# Session 46, call 7: the whole GPU suite beside the memcheck at v0.2.55 as it lands (the
# shared offsets off for uniform multi-split 16-row builds since call 3's suite); then
# llama3-70b-tp8's plain 8 x 131,072 sharing batch, which call 6 found 5% slower (back to
# v0.2.54's build now).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 8 $OUT/logs/pytest.txt
wait
tail -n 3 $OUT/logs/memcheck.txt
timeout 40 python3 -m splitkv bench --kind gqa --special --labels 8x131072 --models llama3-70b-tp8 --providers splitkv --out $OUT/logs/prefix.json > $OUT/logs/prefix.txt 2>&1; echo "prefix exit $?"
grep "p50" $OUT/logs/prefix.txt | cut -c1-110
cd $OUT && tar czf logs.tgz logs && rm -rf logs
