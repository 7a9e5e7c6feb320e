# Session 45, call 8: "Next runs (session 45)" items 2-3, data: ragged gpt-oss thin launches
# at 212-256 KiB in v0.2.52's tree (.old_src/v52; its default, the balanced schedule or 8
# uniform splits, against one split), and 32-row half blocks in this tree (against 128 keys).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
I2="gpt-oss:1:10:200-850 gpt-oss:1:11:300-900 gpt-oss:1:10:100-960 gpt-oss:1:11:400-1000 gpt-oss:2:10:250-880 gpt-oss:2:11:100-1024 gpt-oss:1:11:600-900 gpt-oss:2:10:500-960"
I3="gpt-oss:4:18:160 gpt-oss:4:26:140 gpt-oss:4:33:190 gpt-oss:4:22:100-180"
timeout 60 python3 .old_src/v52/tools/gqa_plan_ab.py --rounds 2 --batch $I2 --variant s1 num_splits=1 block_n=128 split_num_stages=3 page_prefetch=True --out $OUT/logs/ragged_thin.jsonl > $OUT/logs/ragged_thin.txt 2>&1; echo "ragged exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/ragged_thin.jsonl --variants planned s1
timeout 40 python3 tools/gqa_plan_ab.py --rounds 2 --batch $I3 --variant b128 block_n=128 --out $OUT/logs/half32.jsonl > $OUT/logs/half32.txt 2>&1; echo "half32 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/half32.jsonl --variants planned b128
cd $OUT && tar czf logs.tgz logs && rm -rf logs
