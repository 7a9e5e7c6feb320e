# Session 32, call 5: the GQA cascade with and without the batch == 1 specialisation.
steps=()
steps+=("120:stacked_spec:python3 run40_stacked.py")
bash tools/device_steps.sh "${steps[@]}"
