# Session 58's first call (carry run177.sh; H100 or H200). In order, each part skipped when the
# 590 s would not hold it: (1) the GPU test of whole pieces on the 64-row program loop (opt-in,
# never run on a GPU before); (2) `splitkv bench --ablation mtp_loop`: the Gluon program loop's
# knobs (whole pieces, bf16 partials, piece cost 1-8, early start) on issue 5's ragged and
# one-long batches at qlen 2 and 4; (3) llama3-70b-tp8 at qlen 4 on 64 splits of 2,048 keys,
# v0.2.69 against the long-split tile (on an H200: run176's `wide` instead); (4) memcheck, with
# v0.2.69's H100 plan and the 64-row whole pieces added; (5) the ablation again (round 2).
# Predictions: docs/perf.md "Session 58: predictions for run177". Logs come back as one archive.
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
loop_ablation() {  # round
  timeout $2 python3 -m splitkv bench --ablation mtp_loop --heads 12 --rep-ms 30 --out $L/mtp_loop$1 --tag mtp_loop$1 > $L/mtp_loop$1.txt 2>&1; echo "mtp_loop$1 exit $? at ${SECONDS} s"
  grep -E "^\[|p50|unsupported|wrong|crashed" $L/mtp_loop$1.txt | cut -c1-150
}
timeout 120 python3 -m pytest -q -p no:cacheprovider -n 4 tests/test_warp_specialized.py -k "whole_pieces" > $L/tests.txt 2>&1; echo "tests exit $? at ${SECONDS} s"; tail -2 $L/tests.txt
fits 240 mtp_loop && loop_ablation 1 240
if grep -q H200 $L/gpu_env.txt; then
  U="u num_splits=@planned block_n=128 split_num_stages=2 page_prefetch=False"
  W32="qwen-64-8:4:3:16384 qwen-64-8:4:6:16384 qwen-64-8:4:2:65536 qwen-64-8:4:12:4096 qwen-64-8:4:16:4096 qwen-64-8:4:8:8192 llama3-8b:8:4:32768 llama3-8b:8:8:16384 llama3-8b:8:16:4096 llama3-8b:8:2:65536 llama3-70b-tp8:4:32:16384 llama3-70b-tp8:4:8:65536 llama3-70b-tp8:4:24:32768 llama3-70b-tp8:4:48:16384 llama3-70b-tp8:4:3:131072"
  fits 200 wide && ab wide 200 --variant $U --batch $W32 qwen-64-8:4:1:65536 llama3-70b-tp8:4:4:65536
else
  OLD="old num_splits=@planned block_n=64 split_num_stages=3 page_prefetch=True"
  fits 90 split64 && ab split64 90 --variant $OLD --batch llama3-70b-tp8:4:3:131072 llama3-70b-tp8:4:4:131072 llama3-70b-tp8:4:2:131072
fi
fits 200 memcheck && { PYTORCH_NO_CUDA_MEMORY_CACHING=1 PYTHONPATH=$PWD/src:$PWD/tests timeout $((585 - SECONDS)) compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $L/memcheck.txt 2>&1; echo "memcheck exit $? at ${SECONDS} s"; tail -n 3 $L/memcheck.txt; }
fits 260 mtp_loop2 && loop_ablation 2 240
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
