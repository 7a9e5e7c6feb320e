# Session 61 (carry run190.sh; either GPU, ~450 s): page sizes off a power of two.
# (1) their GPU tests beside the suites they touch; (2) MLA 12 heads, issue 5's ragged and
# one-long batches at qlen 1 and 4, pages 64 / 48 / 96 / 528 / 100; (3) GQA llama3-8b
# 8 x 32,768 at pages 16 / 24 / 48 / 528 / 100. Predictions: docs/perf.md "Session 61:
# predictions for run190".
CALL_LIMIT=580
source tools/device_call.sh
timeout 220 python3 -m pytest tests/test_any_page_size.py tests/test_checks.py \
  tests/test_mla_decode.py tests/test_gqa_decode.py tests/test_shared_prefix.py \
  tests/test_shared_prefix_gqa.py -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 4 $L/pytest.txt; grep -E "^FAILED|Error" $L/pytest.txt | head -20
fits 170 mla && bench mla 170 --special --labels ragged 1x --heads 12 --qlen 1 4 \
  --page-size 64 48 96 528 100 --rep-ms 30
fits 100 gqa && bench gqa 100 --kind gqa --models llama3-8b --context 32768 --batch 8 \
  --page-size 16 24 48 528 100 --rep-ms 30
pack_logs
