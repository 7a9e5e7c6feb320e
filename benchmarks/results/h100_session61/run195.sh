# Session 61's last device time (carry run195.sh; either GPU, ~220 s of the ~330 s left):
# the GPU test of copies shorter than the page allows, then `--ablation copy_rows` (two rounds
# if they fit). Predictions: docs/perf.md "Session 61: predictions for run195".
CALL_LIMIT=225
source tools/device_call.sh
PYTHONPATH=$PWD/src:$PWD/tests timeout 60 python3 -m pytest tests/test_any_page_size.py -n 8 \
  -q -p no:cacheprovider -k shorter_copies > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 1 $L/pytest.txt; grep "^FAILED" $L/pytest.txt | head
for round in 1 2; do
  fits 70 r$round && bench r$round $((CALL_LIMIT - SECONDS - 5)) --ablation copy_rows --rep-ms 15
done
pack_logs
