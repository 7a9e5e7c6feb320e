steps=()
E="FACTORS='1' ONE_KV_FACTORS='1' STAGES='2 3' BLOCK_NS='64' D64_BLOCK_NS='128'"
steps+=("200:uniform_q1:$E UNIFORM='32768x1 32768x8 131072x1 131072x8' python3 run18_gqa.py")
bash tools/device_steps.sh "${steps[@]}"
