# Session 44, call 8: call 7's pytest again, its CUDA-graph replay fixed to shorter lengths
# (call 7 replayed lengths past each request's own pages, which hold NaN in the test's pool).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
export PYTHONPATH=$PWD/src:$PWD/tests
timeout 120 python3 -m pytest tests/test_gqa_gpu.py -k one_split -n 4 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 4 $OUT/logs/pytest.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
