# Planned in session 64 for session 65 (carry run212.sh; either GPU, ~430 s; in session 64
# only its cut run212b ran): the Gluon kernels on pages
# bulk copies cannot take, their key rows gathered by the producer warp (kernels/
# gathered_keys.py, new): the GPU tests of tests/test_any_page_size.py (the new gathered-page
# cases at pages 1, 4, 12 and 100 included), then issue 5's ragged and one-long batches at 12
# heads x qlen 1 / 2 / 4, pages 1 (SGLang's) and 100, the gathered rows against the Triton tiles
# (--no-warp-specialized; gathered rows are opt-in until timed: --warp-specialized). Page 64
# is session 63's run207 (same kernels). Predictions:
# docs/perf.md "Session 64: predictions for run212".
CALL_LIMIT=430
source tools/device_call.sh
PYTHONPATH=$PWD/src:$PWD/tests timeout 140 python3 -m pytest tests/test_any_page_size.py \
  -m gpu -k "gathered" -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 15 $L/pytest.txt | grep -E "passed|failed|FAILED|Error"
COMMON="--special --labels ragged 1x --heads 12 --qlen 1 2 4 --providers splitkv --rep-ms 10"
fits 100 gather && bench gather 130 $COMMON --page-size 1 100 --warp-specialized
fits 90 triton && bench triton 120 $COMMON --page-size 1 100 --no-warp-specialized
pack_logs
