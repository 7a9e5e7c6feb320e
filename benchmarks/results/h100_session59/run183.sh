# Session 59's retry of run182 with the ~295 s of device time two failed starts left (carry
# run183.sh), each part cut to ~150 s and its rows printed as they come (a call cut short at
# the device limit still returns its output): on an H200, run176's first part on 10 of its
# batches (does the H200 take the H100's 32-row head-dim-128 uniform tile? predictions:
# docs/perf.md "Session 57: predictions for run176"); on an H100, run182's first round
# (predictions: "Session 59: predictions for run182").
source tools/device_call.sh
if grep -q H200 $L/gpu_env.txt; then
  U="u num_splits=@planned block_n=128 split_num_stages=2 page_prefetch=False"
  W32="qwen-64-8:4:3:16384 qwen-64-8:4:2:65536 qwen-64-8:4:16:4096 llama3-8b:8:4:32768 llama3-8b:8:16:4096 llama3-70b-tp8:4:32:16384 llama3-70b-tp8:4:8:65536 llama3-70b-tp8:4:3:131072"
  ab wide 150 --variant $U --batch $W32 qwen-64-8:4:1:65536 llama3-70b-tp8:4:4:65536
else
  timeout 160 python3 -m splitkv bench --ablation alternate_piece_cost --heads 128 64 32 \
    --rep-ms 30 --out $L/alt1 --tag alt1 2>&1 | tee $L/alt1.txt \
    | grep --line-buffered -E "^\[|p50|unsupported|wrong|crashed"
  echo "alt1 exit $? at ${SECONDS} s"
fi
pack_logs
