# Session 44, call 4: one split at one kv head (llama3-70b-tp8), the default against one split
# on the long-split tile (s1L), 2 rounds, v0.2.51.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
Q="llama3-70b-tp8:1:96:512 llama3-70b-tp8:1:128:768 llama3-70b-tp8:1:200:300 llama3-70b-tp8:1:160:1024 llama3-70b-tp8:1:128:256 llama3-70b-tp8:1:100:100-1500 llama3-70b-tp8:2:160:700 llama3-70b-tp8:2:96:1024 llama3-70b-tp8:2:128:400 llama3-70b-tp8:4:128:1024 llama3-70b-tp8:4:100:512 llama3-70b-tp8:4:200:384 llama3-70b-tp8:4:128:100-1200 llama3-70b-tp8:8:96:1024 llama3-70b-tp8:8:128:300 llama3-70b-tp8:1:80:512 llama3-70b-tp8:4:90:768"
timeout 150 python3 tools/gqa_plan_ab.py --rounds 2 --batch $Q --variant s1L num_splits=1 block_n=64 split_num_stages=3 page_prefetch=True --out $OUT/logs/one_head.jsonl > $OUT/logs/one_head.txt 2>&1; echo "exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/one_head.jsonl --variants planned s1L
cd $OUT && tar czf logs.tgz logs && rm -rf logs
