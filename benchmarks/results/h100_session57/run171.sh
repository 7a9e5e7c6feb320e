# Session 57's first call (carry run171.sh; H100 or H200). In order, each part skipped when the
# 590 s would not hold it: (1) session 56's run169, v0.2.67 held out (gpt-oss qlen 8, 64-row
# tile, against twice the splits) and its GPU test; (2) on an H200 only, session 56's run170
# (v0.2.66's pack and v0.2.67's halving against the plans they replaced); (3) issue 5's
# standing beside the Triton peer (carry .peers). Predictions: docs/perf.md "Session 57:
# predictions for run171". Logs come back as one archive.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
L=$OUT/logs
mkdir -p $L
git rev-parse HEAD > $L/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $L/gpu_env.txt
ls .peers > $L/peers.txt 2>&1
fits() { [ $((SECONDS + $1)) -lt 580 ] || { echo "skipped $2 at ${SECONDS} s"; return 1; }; }
ab() {  # name timeout variant-args... -- batches...
  local name=$1 limit=$2; shift 2
  timeout $limit python3 tools/gqa_plan_ab.py --rounds 2 "$@" --out $L/$name.jsonl > /dev/null 2>$L/$name.err; echo "$name exit $? at ${SECONDS} s"
  python3 tools/ab_summary.py $L/$name.jsonl --plans | tee $L/${name}_summary.txt
  grep WRONG $L/$name.err || echo "$name: every variant within the tolerance"
}
ab heldout 150 --variant v66 num_splits=@planned*2 --batch gpt-oss:8:34:8192 gpt-oss:8:50:16384 gpt-oss:8:57:4000 gpt-oss:8:22:16384 gpt-oss:8:27:65536 gpt-oss:8:13:32768 gpt-oss:8:9:1000 gpt-oss:8:7:65536 gpt-oss:8:5:2048 gpt-oss:8:3:131072
timeout 60 python3 -m pytest -q -p no:cacheprovider -n 4 tests/test_gqa_gpu.py -k "halved_past_a_wave" > $L/tests.txt 2>&1; echo "tests exit $? at ${SECONDS} s"; tail -2 $L/tests.txt
if grep -q H200 $L/gpu_env.txt; then
  fits 150 pack && ab pack 150 --variant v65 kv_pack=1 --batch gpt-oss:1:36:32768 gpt-oss:1:48:32768 gpt-oss:1:64:32768 gpt-oss:1:48:8192 gpt-oss:1:26:8192 gpt-oss:1:52:65536 gpt-oss:1:117:32768
  fits 120 half && ab half 120 --variant v66 num_splits=@planned*2 --batch gpt-oss:8:18:32768 gpt-oss:8:42:4000 gpt-oss:8:44:32768 gpt-oss:8:6:65536 gpt-oss:8:28:32768 gpt-oss:8:16:32768
fi
fits 100 mla_standing && { timeout 130 python3 -m splitkv bench --rep-ms 30 --providers splitkv,triton-peer --special --labels ragged 1x --heads 12 --qlen 1 2 4 --out $L/mla_standing --tag mla_standing > $L/mla_standing.txt 2>&1; echo "mla standing exit $? at ${SECONDS} s"; tail -n 14 $L/mla_standing.txt; }
fits 80 gqa_standing && { timeout 110 python3 -m splitkv bench --rep-ms 30 --kind gqa --providers splitkv,triton-peer --special --labels ragged 1x131072 --models llama3-8b gpt-oss llama3-70b-tp8 --out $L/gqa_standing --tag gqa_standing > $L/gqa_standing.txt 2>&1; echo "gqa standing exit $? at ${SECONDS} s"; tail -n 14 $L/gqa_standing.txt; }
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
