# Session 46, call 5: issue 5's GQA shared-prefix row, v0.2.54 (.old_src/v54) against this
# tree, each once: 8 x 131,072 sharing 122,880 and the 6-group mix, plain and cascade.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
for tree in v54 v55; do
  root=.old_src/$tree; [ $tree = v55 ] && root=.
  PYTHONPATH=$root/src timeout 150 python3 -m splitkv bench --kind gqa --special --labels 8x131072 '48 in 6' --models llama3-8b gpt-oss llama3-70b-tp8 --providers splitkv,splitkv-prefix --out $OUT/logs/prefix_$tree.json > $OUT/logs/prefix_$tree.txt 2>&1; echo "prefix $tree exit $?"
  grep "p50" $OUT/logs/prefix_$tree.txt | cut -c1-130
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
