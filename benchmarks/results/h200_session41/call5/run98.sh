# Session 41, call 5: "Next runs (session 41)" item 2: splits of 250 keys take 32-key blocks
# (gqa_wide_tile's 4 blocks a split); the same plans on 64-key blocks, 2 and 3 stages.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
B="llama3-70b-tp8:4:32:2000 llama3-70b-tp8:4:48:2000 llama3-70b-tp8:4:64:1000 llama3-70b-tp8:4:96:1000 llama3-70b-tp8:4:32:100-2000"
timeout 150 python3 tools/gqa_plan_ab.py --rounds 2 --batch $B --variant "64 keys" block_n=64 --variant "64 keys 3 stages" block_n=64 split_num_stages=3 --out $OUT/logs/blocks.jsonl > $OUT/logs/blocks.txt 2>&1; echo "exit $?"
cat $OUT/logs/blocks.txt | cut -c1-400
