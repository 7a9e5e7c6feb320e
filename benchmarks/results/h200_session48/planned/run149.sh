# Session 48 (planned), call 2: the tree as committed (the cascade's chunk-row fix, the host-time
# changes): the whole GPU suite beside the memcheck (its cascades now led by a member ending
# inside the prefix), then issue 5's shared-prefix batches for MLA and GQA against the
# v0.2.56 tree (carry .old_src/v56: `git archive b20e8a9 src tools`), one round each, to
# show the fix costs nothing (predict level within 1%).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 PYTHONPATH=$PWD/src:$PWD/tests timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
PYTHONPATH=$PWD/src:$PWD/tests timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 4 $OUT/logs/pytest.txt
wait
tail -n 3 $OUT/logs/memcheck.txt
for tree in .old_src/v56 .; do
  name=$( [ "$tree" = "." ] && echo new || echo old )
  PYTHONPATH=$PWD/$tree/src timeout 60 python3 -m splitkv bench --special --labels 8x327600 '48 in 6' --providers splitkv-prefix --out $OUT/logs/mla_$name > $OUT/logs/mla_prefix_$name.txt 2>&1; echo "mla $name exit $?"
  grep "p50" $OUT/logs/mla_prefix_$name.txt | cut -c1-110
  PYTHONPATH=$PWD/$tree/src timeout 60 python3 -m splitkv bench --kind gqa --special --labels 8x131072 '48 in 6' --models llama3-8b gpt-oss --providers splitkv-prefix --out $OUT/logs/gqa_$name > $OUT/logs/gqa_prefix_$name.txt 2>&1; echo "gqa $name exit $?"
  grep "p50" $OUT/logs/gqa_prefix_$name.txt | cut -c1-110
  rm -rf $OUT/logs/mla_$name $OUT/logs/gqa_$name
done
