# Session 41, call 3: pinned uniform split counts where v0.2.45's partials cap changed the
# count (call 2) and around it: llama3-70b-tp8 at qlen 2/4/8 and 8-kv-head batches of 1-4k
# keys at qlen 4/8, with the GPU's builds; for the cap's conditions.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
A=""; B=""
for q in 2 4 8; do for rk in 32:2000 64:1000 48:2000 8:4096 2:16384 1:16384 1:65536 24:3000 12:6000; do A="$A llama3-70b-tp8:$q:$rk"; done; done
for b in gpt-oss:8:8:2048 gpt-oss:8:16:1024 gpt-oss:8:8:1024 gpt-oss:8:4:4096 gpt-oss:8:32:1024 qwen-64-8:8:8:2048 qwen-64-8:8:16:1024 llama3-8b:8:8:1024 llama3-8b:8:16:1024 llama3-8b:8:8:2048 gpt-oss:4:8:1024 gpt-oss:4:16:1024 gpt-oss:4:8:2048; do B="$B $b"; done
V() { for s in "$@"; do printf -- '--variant s%s num_splits=%s ' $s $s; done; }
timeout 250 python3 tools/gqa_plan_ab.py --rounds 1 --batch $A $(V 2 4 8 16 32 64 128) --out $OUT/logs/sweep_a.jsonl --builds $OUT/logs/builds_a.jsonl > $OUT/logs/sweep_a.txt 2>&1; echo "a exit $?"
timeout 150 python3 tools/gqa_plan_ab.py --rounds 1 --batch $B $(V 1 2 4 8 16) --out $OUT/logs/sweep_b.jsonl --builds $OUT/logs/builds_b.jsonl > $OUT/logs/sweep_b.txt 2>&1; echo "b exit $?"
wc -l $OUT/logs/*.jsonl
cd $OUT && tar czf logs.tgz logs && rm -rf logs
