# Next session, call 2 (items 1-3). FACTORS scale v0.2.31's default split count.
steps=()
# Item 1: the 16-row batch-1 shapes that lost 1-3%: v0.2.31's half (x1) against the full count (x2).
steps+=("120:batch1_q1:MODELS='llama3-8b gpt-oss' FACTORS='1 2' STAGES='2 3' BLOCK_NS='64' D64_BLOCK_NS='64 128' UNIFORM='32768x1 131072x1 262144x1' QLEN=1 python3 run18_gqa.py")
# Item 2: what the 4 MiB cap leaves out (no halving there: x0.5 is half, x0.25 a quarter).
steps+=("150:capped_q1:MODELS='llama3-8b gpt-oss' FACTORS='0.25 0.5 1' STAGES='3' BLOCK_NS='64' D64_BLOCK_NS='128' UNIFORM='131072x4 131072x8' QLEN=1 python3 run18_gqa.py")
# Item 3: the GQA cascade's special batches (stacked pass on the long-split tile).
steps+=("240:gqa_prefix:python3 -m splitkv bench --kind gqa --special --labels 8x131072 '48 in 6' --models llama3-8b gpt-oss llama3-70b-tp8 --providers splitkv,splitkv-prefix --out \$STEP_OUT --tag h200_gqa_prefix_v0.2.31")
bash tools/device_steps.sh "${steps[@]}"
