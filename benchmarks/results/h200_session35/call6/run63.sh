# Session 35, call 6: llama3-70b-tp8's balanced grid on larger ragged batches.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
STEP_OUT=$OUT/logs timeout 200 python3 run63_gqa_one_head_large.py > $OUT/logs/gqa_one_head_large.txt 2>&1; echo "exit $?"
cut -c1-300 $OUT/logs/gqa_one_head_large.txt
