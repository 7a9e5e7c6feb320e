# Session 43, call 4 ("Next runs (session 43)" items 1-2, data for a rule): one split on the
# long-split tile (block_n 128 at head dim 64, 64 at 128; 3 stages; page ids ahead: "L")
# against one split as v0.2.48 plans it ("s1": the deep or 2-stage wide tile below 8
# long-split blocks) and v0.2.48's default, 2 rounds: 64 rows under a program an SM, and 32
# rows (gpt-oss at qlen 4, llama3-8b at qlen 8).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
G="gpt-oss:8:10:512 gpt-oss:8:10:768 gpt-oss:8:11:640 gpt-oss:8:12:900 gpt-oss:8:14:768 gpt-oss:8:9:512 gpt-oss:8:16:300 gpt-oss:8:12:512 gpt-oss:8:11:384"
G="$G gpt-oss:4:12:512 gpt-oss:4:20:768 gpt-oss:4:40:1024 gpt-oss:4:12:2048 gpt-oss:4:16:1024 gpt-oss:4:24:256 gpt-oss:4:14:768 gpt-oss:4:20:1024"
Q="qwen-64-8:8:11:300 qwen-64-8:8:12:300 qwen-64-8:8:9:300 llama3-8b:8:16:768 llama3-8b:8:16:1024 llama3-8b:8:12:1024 llama3-8b:8:24:768 llama3-8b:8:20:512"
timeout 150 python3 tools/gqa_plan_ab.py --rounds 2 --batch $G --variant s1 num_splits=1 --variant L num_splits=1 block_n=128 split_num_stages=3 page_prefetch=True --out $OUT/logs/long_hd64.jsonl > $OUT/logs/long_hd64.txt 2>&1; echo "hd64 exit $?"
timeout 120 python3 tools/gqa_plan_ab.py --rounds 2 --batch $Q --variant s1 num_splits=1 --variant L num_splits=1 block_n=64 split_num_stages=3 page_prefetch=True --out $OUT/logs/long_hd128.jsonl > $OUT/logs/long_hd128.txt 2>&1; echo "hd128 exit $?"
for f in long_hd64 long_hd128; do
  for v in s1 L; do echo "== $f planned vs $v"; python3 tools/gqa_ab_compare.py $OUT/logs/$f.jsonl --variants planned $v; done
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
