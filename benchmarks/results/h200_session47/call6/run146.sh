# Session 47, call 6: issue 5's gpt-oss qlen 1 special batches, v0.2.55 and v0.2.56 in one
# run, alternating twice (the bench's CUDA-graph medians beside its read ceiling).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
for r in 1 2; do
  for tree in .old_src/v55 .; do
    name=$( [ "$tree" = "." ] && echo new || echo old )
    PYTHONPATH=$PWD/$tree/src timeout 60 python3 -m splitkv bench --kind gqa --special --labels ragged 1x --models gpt-oss --qlen 1 --providers splitkv --out $OUT/logs/$name$r > $OUT/logs/${name}_$r.txt 2>&1
    echo "$name $r: $(python3 -c "import splitkv; print(splitkv.__version__)" 2>/dev/null)"; PYTHONPATH=$PWD/$tree/src python3 -c "import splitkv; print(splitkv.__file__, splitkv.__version__)"
    grep "p50" $OUT/logs/${name}_$r.txt | cut -c1-110
    rm -rf $OUT/logs/$name$r
  done
done
