steps=()
E="FACTORS='1' ONE_KV_FACTORS='1' STAGES='2 3' BLOCK_NS='64' D64_BLOCK_NS='128'"
steps+=("200:uniform_q1:$E UNIFORM='32768x1 32768x8 131072x1 131072x8' python3 run18_gqa.py")
R="1 63 64 65 4096 4097 32768 131072"
steps+=("150:ncu_gptoss:NCU_SOURCE=1 bash tools/ncu_kernel.sh gptoss_ragged gqa_balanced --kind gqa --model gpt-oss --seq-lens $R && python3 tools/ncu_stalls.py \$STEP_OUT/gptoss_ragged_sass.csv 2>&1 | head -60")
steps+=("150:ncu_llama8b:NCU_SOURCE=1 bash tools/ncu_kernel.sh llama8b_ragged gqa_balanced --kind gqa --model llama3-8b --seq-lens $R && python3 tools/ncu_stalls.py \$STEP_OUT/llama8b_ragged_sass.csv 2>&1 | head -60")
bash tools/device_steps.sh "${steps[@]}"
