# Session 72 (carry run234.sh and .peers; either GPU): on an H200 issue 5's standing (12 heads
# page 64, qlen 1 / 2 / 4, the Triton peer beside it; unmeasured there since session 34) and
# the shared-prefix batches (predictions: docs/perf.md "Session 72: predictions for run231");
# then, on either GPU, the GQA standing beside the peer (ragged and 1 x 131,072 + 47 short,
# three models; last on an H100 in session 57, run171). Predictions: docs/perf.md "Session 72:
# predictions for run234". ~420 s on an H200, ~130 s on an H100.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
issue5_on_h200  # tools/device_call.sh since session 73: the commands this call ran inline
fits 90 gqa_standing && bench gqa_standing 110 --rep-ms 20 --kind gqa --providers splitkv,triton-peer \
  --special --labels ragged 1x131072 --models llama3-8b gpt-oss llama3-70b-tp8
pack_logs
