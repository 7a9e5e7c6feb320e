# For session 63 (carry run201.sh; either GPU, ~300 s): the 16-row Triton tile where bulk copies
# cannot run (pages that blocks do not divide, or under 64 keys), default (page ids a block
# ahead, one latent chain) against two chains without the look-ahead, two rounds. Compiled for
# sm_90 (docs/perf.md "Session 62: predictions for run201"): 2139 -> 1161 loop instructions at
# page 100. Then the GPU tests of odd pages.
source tools/device_call.sh
COMMON="--special --labels ragged 1x --heads 12 16 --qlen 1 --page-size 100 48 4 \
  --no-warp-specialized --providers splitkv --rep-ms 15"
for round in 1 2; do
  fits 70 default$round && bench default$round 90 $COMMON
  fits 70 chains$round && bench chains$round 90 $COMMON --latent-chains 2 --no-page-prefetch
done
PYTHONPATH=$PWD/src:$PWD/tests timeout 100 python3 -m pytest tests/test_any_page_size.py -n 8 -q \
  -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 1 $L/pytest.txt
pack_logs
