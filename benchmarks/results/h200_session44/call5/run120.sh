# Session 44, call 5: v0.2.52's one split at one kv head held out (llama3-70b-tp8), timed in
# v0.2.51's tree (.old_src/v51) with each new plan as the variant s1L, checked by
# tools/gqa_ab_compare.py --plans; then the whole GPU suite beside the memcheck at v0.2.52.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
HO="llama3-70b-tp8:1:110:640 llama3-70b-tp8:1:150:400 llama3-70b-tp8:1:250:200 llama3-70b-tp8:1:120:100-700 llama3-70b-tp8:1:300:256 llama3-70b-tp8:1:96:768 llama3-70b-tp8:2:100:600 llama3-70b-tp8:2:180:300 llama3-70b-tp8:2:140:100-600 llama3-70b-tp8:4:120:700 llama3-70b-tp8:4:150:256 llama3-70b-tp8:4:250:300 llama3-70b-tp8:4:110:100-700 llama3-70b-tp8:8:110:800 llama3-70b-tp8:8:150:512 llama3-70b-tp8:8:300:200 llama3-70b-tp8:8:100:100-1000 llama3-70b-tp8:1:85:512 llama3-70b-tp8:4:96:1024"
python3 tools/gqa_plan_ab.py --plans-only --batch $HO > $OUT/logs/plans_new.txt 2>/dev/null
timeout 150 python3 .old_src/v51/tools/gqa_plan_ab.py --rounds 2 --batch $HO --variant s1L num_splits=1 block_n=64 split_num_stages=3 page_prefetch=True --out $OUT/logs/held_out.jsonl > $OUT/logs/held_out.txt 2>&1; echo "held out exit $?"
python3 tools/gqa_ab_compare.py $OUT/logs/held_out.jsonl --variants planned s1L --plans $OUT/logs/plans_new.txt
export PYTHONPATH=$PWD/src:$PWD/tests
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 4 $OUT/logs/pytest.txt
wait
tail -n 3 $OUT/logs/memcheck.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
