# Planned in session 59 for whichever GPU comes (carry run183.sh; not run in session 59: two
# starts found no machine and spent its last ~300 s of device time), ~400 s, the bench's rows
# printed as they come (a call cut at the device limit still returns its output).
# On an H100: run182's ablation, the alternating consumers' piece cost (predictions:
# docs/perf.md "Session 59: predictions for run182"), two rounds.
# On an H200: (1) `--ablation loop_piece_cost` (the 64-row loop's cost, fitted on the H100 in
# session 59; predictions: "Next runs (session 59)" item 2); (2) run182's ablation, one round;
# (3) run176's first part on 10 of its batches (does the H200 take the H100's 32-row
# head-dim-128 uniform tile? predictions: "Session 57: predictions for run176").
CALL_LIMIT=560
source tools/device_call.sh
ALT="--ablation alternate_piece_cost --heads 128 64 32 --rep-ms 30"
if grep -q H200 $L/gpu_env.txt; then
  bench cost 150 --ablation loop_piece_cost --heads 12 16 32 64 --rep-ms 30
  fits 150 alt1 && bench alt1 150 $ALT
  U="u num_splits=@planned block_n=128 split_num_stages=2 page_prefetch=False"
  W32="qwen-64-8:4:3:16384 qwen-64-8:4:2:65536 qwen-64-8:4:16:4096 llama3-8b:8:4:32768 llama3-8b:8:16:4096 llama3-70b-tp8:4:32:16384 llama3-70b-tp8:4:8:65536 llama3-70b-tp8:4:3:131072"
  fits 160 wide && ab wide 160 --variant $U --batch $W32 qwen-64-8:4:1:65536 llama3-70b-tp8:4:4:65536
else
  bench alt1 210 $ALT
  fits 180 alt2 && bench alt2 180 $ALT
fi
pack_logs
