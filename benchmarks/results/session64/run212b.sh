# Session 64's last try (carry run212b.sh; either GPU, ~170 s): run212 cut to what the device
# budget left after refused starts: the gathered-page GPU tests, then, time left, qlen 1 at
# page 1 gathered against the Triton tiles.
CALL_LIMIT=170
source tools/device_call.sh
PYTHONPATH=$PWD/src:$PWD/tests timeout 130 python3 -m pytest tests/test_any_page_size.py \
  -m gpu -k "gathered" -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 15 $L/pytest.txt | grep -E "passed|failed|FAILED|Error"
COMMON="--special --labels ragged 1x --heads 12 --qlen 1 --page-size 1 --providers splitkv --rep-ms 10"
fits 15 gather && bench gather 20 $COMMON --warp-specialized
fits 15 triton && bench triton 20 $COMMON --no-warp-specialized
pack_logs
