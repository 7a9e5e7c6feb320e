# Session 40, call 1: session 39's next runs (docs/perf.md "Next runs (session 39)" items 1-3
# and 6), each timing with its GPU builds' registers (--builds). `bash run87.sh`, ~8 minutes.
set -o pipefail
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
# 1. Memcheck of v0.2.42's wide uniform GQA tiles alone (tests/gpu_memcheck.py's case).
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -c "import torch, gpu_memcheck as m; torch.manual_seed(0); m.wide_uniform_tiles('cuda'); torch.cuda.synchronize(); print('wide tiles: all calls finished')" > $OUT/logs/memcheck_wide.txt 2>&1; echo "memcheck exit $?" | tee -a $OUT/logs/memcheck_wide.txt
tail -3 $OUT/logs/memcheck_wide.txt
# 3. gpt-oss at qlen 8 (64 rows) on 3 stages against the planner's 2.
timeout 200 python3 tools/gqa_plan_ab.py --batch gpt-oss:8:64:1024 gpt-oss:8:128:1024 gpt-oss:8:256:1024 gpt-oss:8:64:4096 gpt-oss:8:128:4096 gpt-oss:8:32:16384 gpt-oss:8:8:65536 --variant "3 stages" split_num_stages=3 --out $OUT/logs/q8_stages.jsonl --builds $OUT/logs/q8_stages_builds.jsonl > $OUT/logs/q8_stages.txt 2>&1; echo "stages exit $?"
cut -c1-300 $OUT/logs/q8_stages.txt | tail -8
# 2. qwen-64-8 at qlen 4, one split: 64- against 128-key blocks (both on 2 stages) where the
#    launch fills whole waves of 3 programs an SM (99 x 4k) and where it does not (64, 66).
timeout 150 python3 tools/gqa_plan_ab.py --batch qwen-64-8:4:99:4096 qwen-64-8:4:66:4096 qwen-64-8:4:64:4096 --variant "128 keys, 2 stages" split_num_stages=2 --variant "64 keys, 2 stages" block_n=64 split_num_stages=2 --out $OUT/logs/qwen_waves.jsonl --builds $OUT/logs/qwen_waves_builds.jsonl > $OUT/logs/qwen_waves.txt 2>&1; echo "waves exit $?"
cut -c1-300 $OUT/logs/qwen_waves.txt | tail -4
# 6. One uniform split compiled as Triton specialises num_splits = 1 (a constant: the default)
#    against generic, on the planner's stages and on 2.
B="qwen-64-8:4:64:4096 qwen-64-8:4:128:4096 llama3-8b:8:64:4096 gpt-oss:4:64:4096 gpt-oss:4:128:4096"
for build in specialised generic; do
  flag=""; [ $build = generic ] && flag="--generic num_splits"
  timeout 150 python3 tools/gqa_plan_ab.py --batch $B --variant "2 stages" split_num_stages=2 $flag --out $OUT/logs/split1_$build.jsonl --builds $OUT/logs/split1_${build}_builds.jsonl > $OUT/logs/split1_$build.txt 2>&1; echo "$build exit $?"
  cut -c1-300 $OUT/logs/split1_$build.txt | tail -5
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
