# Session 59's retry of run182 (carry run183.sh; not run in session 59: two starts found no
# machine and spent its last ~300 s of device time), each part ~150-210 s, the bench's rows
# printed as they come (a call cut at the device limit still returns its output): on an H200,
# run176's first part on 10 of its batches (does the H200 take the H100's 32-row head-dim-128
# uniform tile? predictions: docs/perf.md "Session 57: predictions for run176"); on an H100,
# run182's ablation (predictions: "Session 59: predictions for run182"), round 2 if it fits.
CALL_LIMIT=420
source tools/device_call.sh
if grep -q H200 $L/gpu_env.txt; then
  U="u num_splits=@planned block_n=128 split_num_stages=2 page_prefetch=False"
  W32="qwen-64-8:4:3:16384 qwen-64-8:4:2:65536 qwen-64-8:4:16:4096 llama3-8b:8:4:32768 llama3-8b:8:16:4096 llama3-70b-tp8:4:32:16384 llama3-70b-tp8:4:8:65536 llama3-70b-tp8:4:3:131072"
  ab wide 150 --variant $U --batch $W32 qwen-64-8:4:1:65536 llama3-70b-tp8:4:4:65536
else
  bench alt1 210 --ablation alternate_piece_cost --heads 128 64 32 --rep-ms 30
  fits 180 alt2 && bench alt2 180 --ablation alternate_piece_cost --heads 128 64 32 --rep-ms 30
fi
pack_logs
