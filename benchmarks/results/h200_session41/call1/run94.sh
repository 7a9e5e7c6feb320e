# Session 41, call 1: GQA uniform batches (4 models, qlen 1/4/8, 8-256 requests of 1k-32k
# keys) timed at pinned split counts (each count on the tile the planner gives it) beside the
# default plan, with the GPU's builds: the data for a residency-aware split count
# (docs/perf.md "Next runs (session 40)" item 1).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
A=""; B=""; C=""
for m in llama3-8b gpt-oss qwen-64-8; do for q in 1 4 8; do
  for rk in 24:4096 40:4096 48:2048 64:4096 96:2048 128:4096 256:1024; do A="$A $m:$q:$rk"; done
  B="$B $m:$q:8:16384"
done; done
for q in 1 4 8; do for rk in 1:32768 4:16384 16:4096 48:4096; do C="$C llama3-70b-tp8:$q:$rk"; done; done
V() { for s in "$@"; do printf -- '--variant s%s num_splits=%s ' $s $s; done; }
timeout 330 python3 tools/gqa_plan_ab.py --rounds 1 --batch $A $(V 1 2 4 8) --out $OUT/logs/sweep_a.jsonl --builds $OUT/logs/builds_a.jsonl > $OUT/logs/sweep_a.txt 2>&1; echo "a exit $?"
timeout 80 python3 tools/gqa_plan_ab.py --rounds 1 --batch $B $(V 4 8 16 32) --out $OUT/logs/sweep_b.jsonl --builds $OUT/logs/builds_b.jsonl > $OUT/logs/sweep_b.txt 2>&1; echo "b exit $?"
timeout 120 python3 tools/gqa_plan_ab.py --rounds 1 --batch $C $(V 4 8 16 32 64 128) --out $OUT/logs/sweep_c.jsonl --builds $OUT/logs/builds_c.jsonl > $OUT/logs/sweep_c.txt 2>&1; echo "c exit $?"
wc -l $OUT/logs/*.jsonl
cd $OUT && tar czf logs.tgz logs && rm -rf logs
