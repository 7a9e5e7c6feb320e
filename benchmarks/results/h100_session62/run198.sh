# Session 62 (carry run198.sh and ab_base, the src before v0.2.74): page ids and slots by one
# division a block on the MLA 64-row Triton tile only (BY_BLOCK, kernels/paged.py), A/B
# against ab_base/src in one call. Predictions: docs/perf.md "Session 62: predictions for
# run198".
CALL_LIMIT=400
source tools/device_call.sh
PYTHONPATH=$PWD/src:$PWD/tests timeout 100 python3 -m pytest tests/test_any_page_size.py -n 8 -q \
  -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 1 $L/pytest.txt; grep "^FAILED" $L/pytest.txt | head
SPECIAL="--special --labels ragged 1x --page-size 100 48 --no-warp-specialized --providers splitkv \
  --rep-ms 15"
UNIFORM="--heads 12 --context 65536 --batch 8 --qlen 4 --page-size 100 --no-warp-specialized \
  --providers splitkv --rep-ms 15"
for round in 1 2; do
  for v in new base; do
    src=$PWD/src; [ $v = base ] && src=$PWD/ab_base/src
    fits 40 q4_$v$round && PYTHONPATH=$src bench q4_$v$round 60 $SPECIAL --heads 12 --qlen 4 1
    fits 20 h128_$v$round && PYTHONPATH=$src bench h128_$v$round 40 $SPECIAL --heads 128 --qlen 1
    fits 15 uniform_$v$round && PYTHONPATH=$src bench uniform_$v$round 30 $UNIFORM
  done
done
pack_logs
