# Session 39, call 3: the wide GQA tile's 64-key cap (run83_wide_keys.py), then the GQA GPU tests.
set -o pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 300 python3 run83_wide_keys.py > $OUT/logs/wide_keys.txt 2>&1; echo "wide exit $?"
cut -c1-300 $OUT/logs/wide_keys.txt | tail -40
timeout 200 python3 -m pytest tests/test_gqa_gpu.py tests/test_gqa_compiled.py tests/test_shared_prefix_gqa.py tests/test_gqa_decode.py tests/test_gqa_tile_rules.py -n 12 -q -p no:cacheprovider > $OUT/logs/pytest_gqa.txt 2>&1; echo "pytest exit $?"
tail -5 $OUT/logs/pytest_gqa.txt
