# Session 79's call on either GPU (carry run254.sh and .peers). On an H200: issue 5's standing
# (`issue5_on_h200`), the alternating part below, GQA's ragged and one-long batches beside the
# Triton peer, then the copy_rows ablation. On an H100: GQA's standing at v0.2.83 (the
# README's H100 GQA figures are session 57's, v0.2.68): ragged and one-long at qlen 1 beside
# the Triton peer, the alternating part, qlen 4, and the GQA shared-prefix batches beside the
# plain kernel. The alternating part: 12 heads x qlen 4, issue 5's ragged and one-long
# batches, on the alternating consumers (`--alternate-blocks`, off by default for one head
# block a request since v0.2.19b's H200 A/B) against the default, two rounds interleaved.
# Predictions: docs/perf.md "Session 79: predictions for run254".
CALL_LIMIT=${CALL_LIMIT:-560}
source tools/device_call.sh
GQA="--kind gqa --special --models llama3-8b gpt-oss llama3-70b-tp8"
alternating() {  # 12 heads x qlen 4, issue 5's batches: default, alternating, twice
  local r
  for r in 1 2; do
    fits 45 "default_q4_$r" && bench "default_q4_$r" 60 --rep-ms 20 --special --labels ragged 1x \
      --heads 12 --qlen 4
    fits 45 "alternate_q4_$r" && bench "alternate_q4_$r" 60 --rep-ms 20 --special \
      --labels ragged 1x --heads 12 --qlen 4 --alternate-blocks
  done
}
if issue5_on_h200; then
  alternating
  fits 120 gqa_standing && bench gqa_standing 130 --rep-ms 20 $GQA \
    --providers splitkv,triton-peer --labels ragged 1x131072
  fits 110 copy_rows && bench copy_rows 120 --ablation copy_rows --rep-ms 10
else
  bench gqa_standing 150 --rep-ms 20 $GQA --providers splitkv,triton-peer --labels ragged 1x131072
  alternating
  fits 120 gqa_q4 && bench gqa_q4 130 --rep-ms 20 $GQA --providers splitkv \
    --labels ragged 1x131072 --qlen 4
  fits 130 gqa_prefix && bench gqa_prefix 140 --rep-ms 20 $GQA \
    --providers splitkv,splitkv-prefix --labels 8x131072 48
fi
pack_logs
