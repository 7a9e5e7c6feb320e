# Session 45, call 2: v0.2.53's half-block rule held out (v0.2.52's tree, .old_src/v52, each
# new plan as a variant, checked by tools/gqa_ab_compare.py --plans), then "Next runs (session
# 44)" items 1 and 3: 80-96 programs at 128-384 KiB a program in v0.2.50's tree (.old_src/v50,
# its 16-row default the fill rule's count) against one split on the long-split tile.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
HO64="gpt-oss:1:20:160 gpt-oss:1:40:130 gpt-oss:2:24:170 gpt-oss:1:36:100-190 gpt-oss:2:16:190 gpt-oss:1:30:40-150 gpt-oss:4:20:170 gpt-oss:4:28:135 gpt-oss:1:40:60"
HO128="llama3-8b:1:24:80 qwen-64-8:1:20:90 llama3-70b-tp8:1:200:72 llama3-8b:2:32:96 llama3-8b:8:20:80 qwen-64-8:4:16:90 qwen-64-8:8:20:140 qwen-64-8:8:16:200 qwen-64-8:8:24:90 qwen-64-8:8:12:210 qwen-64-8:8:30:20-150"
python3 tools/gqa_plan_ab.py --plans-only --batch $HO64 $HO128 > $OUT/logs/plans_new.txt 2>/dev/null
timeout 90 python3 .old_src/v52/tools/gqa_plan_ab.py --rounds 2 --batch $HO64 --variant n64 block_n=64 split_num_stages=3 page_prefetch=True --out $OUT/logs/ho64.jsonl > $OUT/logs/ho64.txt 2>&1; echo "ho64 exit $?"
timeout 90 python3 .old_src/v52/tools/gqa_plan_ab.py --rounds 2 --batch $HO128 --variant n32 block_n=32 split_num_stages=3 page_prefetch=True --out $OUT/logs/ho128.jsonl > $OUT/logs/ho128.txt 2>&1; echo "ho128 exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/ho64.jsonl --variants planned n64 --plans $OUT/logs/plans_new.txt
python3 tools/gqa_ab_compare.py $OUT/logs/ho128.jsonl --variants planned n32 --plans $OUT/logs/plans_new.txt
G64=""; G128=""
for r in 10 11 12; do for k in 512 768 1024 1536; do G64="$G64 gpt-oss:1:$r:$k"; done; done
for r in 10 11; do for k in 512 768 1024 1536; do G64="$G64 gpt-oss:4:$r:$k"; done; done
for r in 10 11 12; do for k in 256 384 512 768; do G128="$G128 qwen-64-8:1:$r:$k"; done; done
for r in 80 88 96; do for k in 256 384 512 768; do G128="$G128 llama3-70b-tp8:1:$r:$k"; done; done
timeout 120 python3 .old_src/v50/tools/gqa_plan_ab.py --rounds 2 --batch $G64 --variant s1 num_splits=1 block_n=128 split_num_stages=3 page_prefetch=True --out $OUT/logs/fill64.jsonl > $OUT/logs/fill64.txt 2>&1; echo "fill64 exit $?"
timeout 120 python3 .old_src/v50/tools/gqa_plan_ab.py --rounds 2 --batch $G128 --variant s1 num_splits=1 block_n=64 split_num_stages=3 page_prefetch=True --out $OUT/logs/fill128.jsonl > $OUT/logs/fill128.txt 2>&1; echo "fill128 exit $?"
timeout 40 python3 .old_src/v50/tools/gqa_plan_ab.py --rounds 2 --batch gpt-oss:4:12:512 gpt-oss:4:12:768 --variant s4 num_splits=4 block_n=64 split_num_stages=2 page_prefetch=False --out $OUT/logs/fill32a.jsonl > $OUT/logs/fill32a.txt 2>&1; echo "fill32a exit $?"
timeout 40 python3 .old_src/v50/tools/gqa_plan_ab.py --rounds 2 --batch gpt-oss:4:12:1024 gpt-oss:4:12:1536 --variant s8 num_splits=8 block_n=64 split_num_stages=2 page_prefetch=False --out $OUT/logs/fill32b.jsonl > $OUT/logs/fill32b.txt 2>&1; echo "fill32b exit $?"
for f in fill64 fill128; do python3 tools/gqa_ab_compare.py $OUT/logs/$f.jsonl --variants planned s1; done
python3 tools/gqa_ab_compare.py $OUT/logs/fill32a.jsonl --variants planned s4
python3 tools/gqa_ab_compare.py $OUT/logs/fill32b.jsonl --variants planned s8
cd $OUT && tar czf logs.tgz logs && rm -rf logs
