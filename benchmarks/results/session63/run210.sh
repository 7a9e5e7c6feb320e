# Planned in session 63 for session 64 (carry run210.sh; either GPU, ~140 s with the start;
# not run in session 63: too little device time was left to start a machine): the GPU tests
# of odd pages (bf16; the 32-row tile on 64-key blocks included), then the uniform 32-row
# rule as the default at 12 heads x qlen 2, page 100 (run209's batches, one round).
CALL_LIMIT=120
source tools/device_call.sh
PYTHONPATH=$PWD/src:$PWD/tests timeout 60 python3 -m pytest tests/test_any_page_size.py \
  -k "32_row or pages_that_blocks_cross" -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 1 $L/pytest.txt
fits 40 uniform && bench uniform 50 --heads 12 --context 8192 68096 --batch 8 48 --qlen 2 \
  --page-size 100 --no-warp-specialized --providers splitkv --rep-ms 5
pack_logs
