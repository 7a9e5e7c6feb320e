# Session 32, call 1 (docs/perf.md "Next runs (session 31)" items 0-2): the whole GPU suite at
# v0.2.32, the GQA cascade's phases (with the suffix pass on a table cut to its longest
# suffix), and ncu of gpt-oss 16-row uniform stage 1 and merge at 131,072 x 1 and 65,536 x 2.
steps=()
steps+=("220:gpu_suite:python3 -m pytest tests -n 12 -q -p no:cacheprovider --durations 10 2>&1 | tail -30")
steps+=("110:cascade_phases:python3 run33_phases.py")
G="--kind gqa --model gpt-oss"
steps+=("200:ncu_gptoss_b1:bash tools/ncu_kernel.sh split_131072x1 gqa_split $G --context 131072 --batch 1 && NCU_CACHE=none bash tools/ncu_kernel.sh merge_131072x1 merge $G --context 131072 --batch 1 && bash tools/ncu_kernel.sh split_65536x2 gqa_split $G --context 65536 --batch 2 && NCU_CACHE=none bash tools/ncu_kernel.sh merge_65536x2 merge $G --context 65536 --batch 2")
bash tools/device_steps.sh "${steps[@]}"
