steps=()
steps+=("240:ab:QLENS='1 2 4 8' python3 run19_ab.py")
bash tools/device_steps.sh "${steps[@]}"
