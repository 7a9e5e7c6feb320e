# Session 36, call 2: the GQA stage-1 grid with kv heads fastest (the working tree, alt) against
# the committed order (kv_head_fastest.patch reversed on a copy of src/ in /tmp/base), two
# rounds, then the GQA GPU tests on alt. Predictions: docs/perf.md "Session 36: predictions".
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
P=$PWD/benchmarks/results/h200_session36/call2/kv_head_fastest.patch
rm -rf /tmp/base && mkdir -p /tmp/base && cp -r src /tmp/base/ && (cd /tmp/base && patch -R -p1 < $P) > $OUT/logs/setup.txt 2>&1
grep -c "kv heads fastest" src/splitkv/kernels/gqa_split.py /tmp/base/src/splitkv/kernels/gqa_split.py | tee -a $OUT/logs/setup.txt
for round in 1 2; do
  check=check; [[ $round == 2 ]] && check=no
  for tree in base alt; do
    src=$PWD/src; [[ $tree == base ]] && src=/tmp/base/src
    STEP_OUT=$OUT/logs PYTHONPATH=$src timeout 120 python3 run67_gqa_kv_order.py ${tree}_r${round} $check > $OUT/logs/${tree}_r${round}.txt 2>&1; echo "$tree r$round exit $?"
    cut -c1-220 $OUT/logs/${tree}_r${round}.txt | head -3
  done
  if [[ $round == 1 ]]; then
    timeout 110 python3 -m pytest tests/test_gqa_gpu.py tests/test_shared_prefix_gqa.py tests/test_balanced_schedule.py -n 12 -q -p no:cacheprovider > $OUT/logs/tests_alt.txt 2>&1; echo "tests exit $?"; tail -3 $OUT/logs/tests_alt.txt
  fi
done
