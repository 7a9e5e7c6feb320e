# Session 62 (carry run197.sh and ab_base, HEAD's src before the change): page ids and slots
# for pages that are not powers of two from one division a block (kernels/paged.py), A/B
# against ab_base/src in one call: the GPU tests of odd pages, the MLA Triton tiles at 12 heads
# and GQA at pages 4-100, then memcheck. Predictions: docs/perf.md "Session 62: predictions
# for run197".
source tools/device_call.sh
PYTHONPATH=$PWD/src:$PWD/tests timeout 120 python3 -m pytest tests/test_any_page_size.py -n 8 -q \
  -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 1 $L/pytest.txt; grep "^FAILED" $L/pytest.txt | head
MLA="--special --labels ragged 1x --heads 12 --qlen 1 4 --page-size 4 100 48 12 \
  --no-warp-specialized --providers splitkv --rep-ms 15"
GQA="--kind gqa --models llama3-8b gpt-oss --context 32768 --batch 8 --page-size 16 24 100 \
  --providers splitkv --rep-ms 15"
for round in 1 2; do
  fits 60 mla_new$round && bench mla_new$round 100 $MLA
  fits 60 mla_base$round && PYTHONPATH=$PWD/ab_base/src bench mla_base$round 100 $MLA
  fits 30 gqa_new$round && bench gqa_new$round 60 $GQA
  fits 30 gqa_base$round && PYTHONPATH=$PWD/ab_base/src bench gqa_base$round 60 $GQA
done
fits 120 memcheck && memcheck $((CALL_LIMIT - SECONDS - 5))
pack_logs
