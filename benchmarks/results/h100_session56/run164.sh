# Session 56's call 3 (H100 or H200; carry run164.sh). run157's host-time part, then session
# 52's run155 (v0.2.61's gpt-oss qlen-4 halving against v0.2.60's count; the wave curves) with a
# deadline: each curve starts only if its timeout fits before 570 s. Predictions: docs/perf.md
# "Session 53: predictions for run157" (host time) and "Session 52: predictions for run155".
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $OUT/logs/gpu_env.txt
timeout 60 python3 tools/call_host_time.py --calls 500 > $OUT/logs/host_time.txt 2>&1; echo "host_time exit $?"; cat $OUT/logs/host_time.txt
curve() { name=$1; limit=$2; shift 2; if [ $((SECONDS + limit)) -gt 570 ]; then echo "curve $name skipped at ${SECONDS}s"; return; fi; timeout $limit python3 tools/gqa_plan_ab.py --rounds 1 --builds $OUT/logs/builds_$name.jsonl --out $OUT/logs/curve_$name.jsonl "$@" > /dev/null 2>$OUT/logs/curve_$name.err; echo "curve $name exit $?"; }
B61="gpt-oss:4:11:32768 gpt-oss:4:14:65536 gpt-oss:4:21:16384 gpt-oss:4:25:32768 gpt-oss:4:28:16384 gpt-oss:4:42:4000 gpt-oss:4:46:8192 gpt-oss:4:48:4000 gpt-oss:4:48:2048 gpt-oss:4:52:4096 gpt-oss:4:56:4000 gpt-oss:4:59:2048 gpt-oss:4:40:4000 gpt-oss:4:6:65536 gpt-oss:4:3:131072"
timeout 100 python3 tools/gqa_plan_ab.py --rounds 2 --variant v60 num_splits=@planned*2 --out $OUT/logs/v61.jsonl --batch $B61 > /dev/null 2>$OUT/logs/v61.err; echo "v61 exit $?"
L8=""; for r in 2 4 6 8 10 11 12 14 16 18 20 21 22 24 26 28 31 32 34 36 38 40; do L8="$L8 llama3-8b:1:$r:32768"; done
Q4=""; Q8=""; for r in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do Q4="$Q4 qwen-64-8:4:$r:16384"; Q8="$Q8 qwen-64-8:8:$r:16384"; done
OS=""; for r in 4 8 12 16 20 24 28 32 36 40 44 48 52 56 60 64; do OS="$OS gpt-oss:1:$r:32768"; done
O4=""; for r in 2 4 6 8 10 11 12 14 16 18 20 21 22 24 26 28 31 32 34 36 38 40; do O4="$O4 gpt-oss:4:$r:32768"; done
curve l8 130 --variant s8 num_splits=8 block_n=64 split_num_stages=2 page_prefetch=False --batch $L8
curve o4 120 --variant s8 num_splits=8 block_n=64 split_num_stages=2 page_prefetch=False --batch $O4
curve oss 100 --variant s8 num_splits=8 kv_pack=2 block_n=64 split_num_stages=2 page_prefetch=False --batch $OS
curve q4 90 --variant s8 num_splits=8 block_n=128 split_num_stages=2 page_prefetch=False --batch $Q4
curve q8 90 --variant s8 num_splits=8 block_n=64 split_num_stages=2 page_prefetch=False --batch $Q8
python3 - <<'PY'
import glob, json, os
for path in sorted(glob.glob(os.environ["OUT"] + "/logs/builds_*.jsonl")):
    for line in open(path):
        b = json.loads(line)
        print(os.path.basename(path), "regs", b["regs"], "warps", b["warps"], "shared", b["shared"], "resident", b["resident"], b["key"][:120])
v61 = os.environ["OUT"] + "/logs/v61.jsonl"
for line in open(v61) if os.path.exists(v61) else []:
    r = json.loads(line)
    a, b = min(r["planned"]), min(r["v60"])
    print(f'{r["batch"]:24s} v0.2.61 {a:8.1f} v0.2.60 count {b:8.1f} {100*(a/b-1):+6.1f}%  {r["plan planned"]} {r["plan v60"]}')
for path in sorted(glob.glob(os.environ["OUT"] + "/logs/curve_*.jsonl")):
    for line in open(path):
        r = json.loads(line)
        print(f'{r["batch"]:24s} planned {r["planned"][0]:8.1f} {r["plan planned"]}  s8 {r["s8"][0]:8.1f} {r["plan s8"]}')
PY
