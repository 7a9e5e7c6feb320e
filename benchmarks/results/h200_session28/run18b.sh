steps=()
steps+=("250:cross_l70b:MODELS=llama3-70b-tp8 python3 run18_gqa.py")
steps+=("200:clamp_ab:python3 run16_ab.py")
bash tools/device_steps.sh "${steps[@]}"
