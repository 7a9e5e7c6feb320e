# Session 39, call 5: v0.2.42's deep stages (run85_deep_stages.py), then the GQA GPU tests.
set -o pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 220 python3 run85_deep_stages.py > $OUT/logs/deep_stages.txt 2>&1; echo "deep exit $?"
cut -c1-400 $OUT/logs/deep_stages.txt | tail -20
timeout 150 python3 -m pytest tests/test_gqa_gpu.py tests/test_gqa_compiled.py tests/test_shared_prefix_gqa.py tests/test_gqa_decode.py tests/test_gqa_tile_rules.py -n 12 -q -p no:cacheprovider > $OUT/logs/pytest_gqa.txt 2>&1; echo "pytest exit $?"
tail -3 $OUT/logs/pytest_gqa.txt
