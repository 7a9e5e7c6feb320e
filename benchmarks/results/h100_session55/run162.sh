# Session 55: the GPU suite alone on the H100, each failure written as it happens
# (report_failures.py): run160 and run161 were cut at 98% by their limits, with 1 and 6 F
# whose names their end summaries would have held.
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $OUT/logs/gpu_env.txt
PYTHONPATH=$PWD/src:$PWD/tests:$PWD/benchmarks/results/h100_session55 timeout 290 python3 -m pytest tests -n 10 -q -p report_failures -p no:cacheprovider > $OUT/logs/pytest.txt 2>&1; echo "pytest exit $?"
tail -n 3 $OUT/logs/pytest.txt
cat $OUT/logs/failures.txt 2>/dev/null | head -80
