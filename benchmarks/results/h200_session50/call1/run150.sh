# Session 49 (planned), call 1: the tree as committed (session 48's cascade chunk-row fix and
# session 49's host-time changes: leaner checks, the device switch only off the current
# device, the cascade's stacked rows by index_select): the whole GPU suite beside the
# memcheck; the host time of a call with a plan (tools/call_host_time.py) on v0.2.57 and this
# tree, twice alternating; issue 5's shared-prefix batches (MLA and GQA) against v0.2.56.
# Carry run150.sh, .old_src/v56 (`git archive b20e8a9 src tools`) and .old_src/v57
# (`git archive ae61ece src tools`, with this tree's tools/call_host_time.py copied into its
# tools/). Predictions: docs/perf.md "Session 49: predictions first".
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
(PYTORCH_NO_CUDA_MEMORY_CACHING=1 PYTHONPATH=$PWD/src:$PWD/tests timeout 330 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu_memcheck.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" >> $OUT/logs/memcheck.txt) &
PYTHONPATH=$PWD/src:$PWD/tests timeout 330 python3 -m pytest tests -n 10 -q -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 4 $OUT/logs/pytest.txt
wait
tail -n 3 $OUT/logs/memcheck.txt
for r in 1 2; do
  for tree in .old_src/v57 .; do
    name=$( [ "$tree" = "." ] && echo new || echo old )
    PYTHONPATH=$PWD/$tree/src timeout 120 python3 $tree/tools/call_host_time.py --calls 500 > $OUT/logs/host_${name}_$r.txt 2>&1; echo "host $name $r exit $?"
    cat $OUT/logs/host_${name}_$r.txt
  done
done
for tree in .old_src/v56 .; do
  name=$( [ "$tree" = "." ] && echo new || echo old )
  PYTHONPATH=$PWD/$tree/src timeout 60 python3 -m splitkv bench --special --labels 8x327600 '48 in 6' --providers splitkv-prefix --out $OUT/logs/mla_$name > $OUT/logs/mla_prefix_$name.txt 2>&1; echo "mla $name exit $?"
  grep "p50" $OUT/logs/mla_prefix_$name.txt | cut -c1-110
  PYTHONPATH=$PWD/$tree/src timeout 60 python3 -m splitkv bench --kind gqa --special --labels 8x131072 '48 in 6' --models llama3-8b gpt-oss --providers splitkv-prefix --out $OUT/logs/gqa_$name > $OUT/logs/gqa_prefix_$name.txt 2>&1; echo "gqa $name exit $?"
  grep "p50" $OUT/logs/gqa_prefix_$name.txt | cut -c1-110
  rm -rf $OUT/logs/mla_$name $OUT/logs/gqa_$name
done
