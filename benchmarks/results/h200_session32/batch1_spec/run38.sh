# Session 32, call 3: batch-1 stage 1 with and without Triton's batch == 1 specialisation.
steps=()
steps+=("300:batch1_spec:python3 run37_batch1.py")
bash tools/device_steps.sh "${steps[@]}"
