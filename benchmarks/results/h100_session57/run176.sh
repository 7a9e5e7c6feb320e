# Planned in session 57 for an H200 (carry run176.sh): does the 32-row head-dim-128 uniform tile
# (128-key blocks, 2 stages) beat the long-split tile at the same count on the H200, as on the
# H100 (v0.2.69's H100 rule)? `u` against the long-split plan on runs 172-175's 32-row batches
# and the 16-row / gpt-oss controls of run174, then session 56's run170 if the time holds. On an
# H100 it repeats runs 172-175. Predictions: docs/perf.md "Session 57: predictions for run176".
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
L=$OUT/logs
mkdir -p $L
git rev-parse HEAD > $L/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $L/gpu_env.txt
fits() { [ $((SECONDS + $1)) -lt 580 ] || { echo "skipped $2 at ${SECONDS} s"; return 1; }; }
ab() {  # name timeout variant-args... --batch batches...
  local name=$1 limit=$2; shift 2
  timeout $limit python3 tools/gqa_plan_ab.py --rounds 2 "$@" --out $L/$name.jsonl > /dev/null 2>$L/$name.err; echo "$name exit $? at ${SECONDS} s"
  python3 tools/ab_summary.py $L/$name.jsonl --plans | tee $L/${name}_summary.txt
  grep WRONG $L/$name.err || echo "$name: every variant within the tolerance"
}
# On an H200 the planned plan is the long-split tile; `u` is the uniform tile at its count
# (on an H100, v0.2.69's plan already is `u` for these, and `old` the long-split tile).
U="u num_splits=@planned block_n=128 split_num_stages=2 page_prefetch=False"
OLD="old num_splits=@planned block_n=64 split_num_stages=3 page_prefetch=True"
W32="qwen-64-8:4:3:16384 qwen-64-8:4:6:16384 qwen-64-8:4:2:65536 qwen-64-8:4:12:4096 qwen-64-8:4:16:4096 qwen-64-8:4:8:8192 llama3-8b:8:4:32768 llama3-8b:8:8:16384 llama3-8b:8:16:4096 llama3-8b:8:2:65536 llama3-70b-tp8:4:32:16384 llama3-70b-tp8:4:8:65536 llama3-70b-tp8:4:24:32768 llama3-70b-tp8:4:48:16384 llama3-70b-tp8:4:3:131072"
CTRL="qwen-64-8:4:1:65536 llama3-8b:8:1:131072 llama3-70b-tp8:4:4:65536 llama3-70b-tp8:4:2:131072 qwen-64-8:4:24:4096"
ab wide 200 --variant $U --variant $OLD --batch $W32 $CTRL
fits 120 other && ab other 120 --variant off long_split=False --batch llama3-70b-tp8:1:8:32768 llama3-8b:1:4:32768 qwen-64-8:2:4:32768 gpt-oss:4:4:32768 gpt-oss:8:3:65536 llama3-70b-tp8:8:8:32768
if grep -q H200 $L/gpu_env.txt; then
  fits 120 pack && ab pack 120 --variant v65 kv_pack=1 --batch gpt-oss:1:36:32768 gpt-oss:1:48:32768 gpt-oss:1:64:32768 gpt-oss:1:48:8192 gpt-oss:1:26:8192 gpt-oss:1:52:65536 gpt-oss:1:117:32768
  fits 100 half && ab half 100 --variant v66 num_splits=@planned*2 --batch gpt-oss:8:18:32768 gpt-oss:8:42:4000 gpt-oss:8:44:32768 gpt-oss:8:6:65536 gpt-oss:8:28:32768 gpt-oss:8:16:32768
fi
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
