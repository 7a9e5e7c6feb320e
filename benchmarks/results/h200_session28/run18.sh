steps=()
steps+=("250:cross_l8b:MODELS=llama3-8b python3 run18_gqa.py")
steps+=("250:cross_gptoss:MODELS=gpt-oss python3 run18_gqa.py")
bash tools/device_steps.sh "${steps[@]}"
