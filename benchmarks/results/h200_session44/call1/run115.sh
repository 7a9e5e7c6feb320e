# Session 44, call 1 ("Next runs (session 43)" items 1-2, data before any rule), v0.2.50's
# tree, 2 rounds: (a) 16 rows at 8 kv heads, the default against one split pinned (s1), one
# split on the long-split tile (s1L) and two (s2); (b) gpt-oss qlen 8 one splits of 200-320
# keys on 128-key blocks (planned) against 64 (b64) and the deep build (s1); (c) 32 rows at
# 80-92 programs, one split on the rule's tile; (d) one split past 512 KiB past a wave.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
AB="python3 tools/gqa_plan_ab.py --rounds 2"
A1="gpt-oss:1:8:1024 gpt-oss:1:16:1024 gpt-oss:1:16:512 gpt-oss:1:24:768 gpt-oss:1:12:2048 gpt-oss:1:32:256 gpt-oss:2:16:1024 gpt-oss:2:24:512 gpt-oss:2:12:1536 gpt-oss:2:8:2048"
A2="llama3-8b:1:16:1024 llama3-8b:1:12:2048 llama3-8b:1:24:512 llama3-8b:1:8:2048 llama3-8b:4:16:1024 llama3-8b:4:24:768 qwen-64-8:1:16:1024 qwen-64-8:1:24:512 qwen-64-8:2:16:1024 qwen-64-8:2:12:2048"
B="gpt-oss:8:18:300 gpt-oss:8:30:300 gpt-oss:8:16:200 gpt-oss:8:20:320 gpt-oss:8:24:256"
C1="gpt-oss:4:10:512 gpt-oss:4:11:512 gpt-oss:4:11:768 gpt-oss:4:11:1024 gpt-oss:4:10:768"
C2="qwen-64-8:4:11:384 qwen-64-8:4:11:768 llama3-8b:8:11:512 llama3-8b:8:10:384"
D="gpt-oss:8:64:3072 gpt-oss:8:96:2048 qwen-64-8:8:48:1536 qwen-64-8:8:64:1024 llama3-8b:8:48:1024 gpt-oss:4:64:1536"
L128="num_splits=1 block_n=128 split_num_stages=3 page_prefetch=True"
L64="num_splits=1 block_n=64 split_num_stages=3 page_prefetch=True"
run() { name=$1; t=$2; shift 2; timeout $t $AB "$@" --out $OUT/logs/$name.jsonl > $OUT/logs/$name.txt 2>&1; echo "$name exit $?"; }
run a1 150 --batch $A1 --variant s1 num_splits=1 --variant s1L $L128 --variant s2 num_splits=2
run a2 150 --batch $A2 --variant s1 num_splits=1 --variant s1L $L64 --variant s2 num_splits=2
run b 60 --batch $B --variant s1 num_splits=1 --variant b64 block_n=64
run c1 50 --batch $C1 --variant s1L $L128
run c2 50 --batch $C2 --variant s1 num_splits=1
run d 80 --batch $D --variant s1 num_splits=1 --variant s2 num_splits=2
for f in a1 a2 b c1 c2 d; do echo "== $f"; cat $OUT/logs/$f.jsonl 2>/dev/null; grep -i -m3 "error\|Traceback" $OUT/logs/$f.txt; done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
