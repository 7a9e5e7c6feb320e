steps=()
E="FACTORS='1 2' ONE_KV_FACTORS='0.5 1' BLOCK_NS='32 64 128' D64_BLOCK_NS='32 64 128' STAGES='2 3'"
steps+=("150:wide32_q4:$E QLEN=4 MODELS='gpt-oss llama3-70b-tp8' python3 run18_gqa.py")
steps+=("75:wide32_q8:$E QLEN=8 MODELS='llama3-8b' python3 run18_gqa.py")
steps+=("90:wide64_q8:$E QLEN=8 LABELS=ragged MODELS='gpt-oss llama3-70b-tp8' python3 run18_gqa.py")
bash tools/device_steps.sh "${steps[@]}"
