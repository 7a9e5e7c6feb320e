# Session 46, call 4: call 3's held-out batches that ran slower on v0.2.55 (9) beside 4 that
# ran faster, the trees in the other order (this tree first, then v0.2.54), 2 rounds: the
# order's drift against the builds' (gpt-oss's uniform builds are v0.2.54's).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
B="gpt-oss:8:19:51-1312 gpt-oss:1:21:183-1932 gpt-oss:4:14:1098 llama3-8b:4:22:1356 gpt-oss:4:16:764 qwen-64-8:4:18:91-592 llama3-8b:4:15:1284 gpt-oss:2:25:378-742 qwen-64-8:1:34:808 llama3-8b:8:31:1796 qwen-64-8:4:31:1296 llama3-70b-tp8:4:92:270-1230 llama3-8b:1:14:447"
timeout 80 python3 tools/gqa_plan_ab.py --rounds 2 --batch $B --out $OUT/logs/rev_v55.jsonl > $OUT/logs/rev_v55.txt 2>&1; echo "v55 exit $?"
timeout 80 python3 .old_src/v54/tools/gqa_plan_ab.py --rounds 2 --batch $B --out $OUT/logs/rev_v54.jsonl > $OUT/logs/rev_v54.txt 2>&1; echo "v54 exit $?"
timeout 80 python3 tools/gqa_plan_ab.py --rounds 2 --batch $B --out $OUT/logs/rev_v55b.jsonl > $OUT/logs/rev_v55b.txt 2>&1; echo "v55b exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/rev_v54.jsonl $OUT/logs/rev_v55.jsonl --names v54 v55-before
python3 tools/gqa_ab_compare.py $OUT/logs/rev_v54.jsonl $OUT/logs/rev_v55b.jsonl --names v54 v55-after
cd $OUT && tar czf logs.tgz logs && rm -rf logs
