# Session 45, call 5: v0.2.54's ragged cap for thin launches held out (v0.2.54 as committed
# before it, .old_src/v54c, against this tree, each its own default, 2 rounds), then the
# session's whole change: v0.2.52's tree (.old_src/v52) against this one on seeded random short
# batches (`python tools/gqa_random_batches.py .old_src/v52 --count 300 --seed 450 --keys 50
# 900`: 19 changed, 4 unchanged controls).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
HR="gpt-oss:1:10:100-800 gpt-oss:1:11:300-850 gpt-oss:2:12:50-700 gpt-oss:2:10:400-880 gpt-oss:1:12:200-600 gpt-oss:1:11:100-400 gpt-oss:2:11:250-860 gpt-oss:1:12:242-770"
R52="gpt-oss:2:13:91-171 llama3-70b-tp8:8:87:133 llama3-70b-tp8:2:85:136 qwen-64-8:2:10:193 llama3-70b-tp8:2:97:138-655 gpt-oss:4:24:183 gpt-oss:2:10:53-232 gpt-oss:1:36:155 llama3-70b-tp8:1:97:421 gpt-oss:1:30:50 gpt-oss:4:11:54-474 gpt-oss:2:11:889 qwen-64-8:8:21:146 qwen-64-8:4:29:78 qwen-64-8:1:19:96 llama3-8b:4:26:78 qwen-64-8:2:23:72 llama3-70b-tp8:1:95:68-762 gpt-oss:4:32:176 gpt-oss:8:17:111 gpt-oss:8:11:298 llama3-70b-tp8:1:105:191 qwen-64-8:1:8:44-237"
timeout 60 python3 .old_src/v54c/tools/gqa_plan_ab.py --rounds 2 --batch $HR --out $OUT/logs/ragged_v54c.jsonl > $OUT/logs/ragged_v54c.txt 2>&1; echo "v54c exit $?"
timeout 60 python3 tools/gqa_plan_ab.py --rounds 2 --batch $HR --out $OUT/logs/ragged_v54.jsonl > $OUT/logs/ragged_v54.txt 2>&1; echo "v54 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/ragged_v54c.jsonl $OUT/logs/ragged_v54.jsonl --names v54c v54
timeout 100 python3 .old_src/v52/tools/gqa_plan_ab.py --rounds 2 --batch $R52 --out $OUT/logs/session_v52.jsonl > $OUT/logs/session_v52.txt 2>&1; echo "v52 exit $?"
timeout 100 python3 tools/gqa_plan_ab.py --rounds 2 --batch $R52 --out $OUT/logs/session_v54.jsonl > $OUT/logs/session_v54.txt 2>&1; echo "v54 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/session_v52.jsonl $OUT/logs/session_v54.jsonl --names v52 v54
cd $OUT && tar czf logs.tgz logs && rm -rf logs
