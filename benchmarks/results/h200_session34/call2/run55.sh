# Next session, call 2: the cascades planned with and without the calls' lengths
# (run43_cascade_lengths.py), the num_splits == 1 specialisation (run44_one_split.py), both in
# h200_session32/next/, and the MLA cascade at v0.2.35. Copy them to the repository root.
steps=()
steps+=("140:cascade_lengths:python3 run43_cascade_lengths.py")
steps+=("100:one_split:python3 run44_one_split.py")
steps+=("70:mla_cascade:python3 -m splitkv bench --rep-ms 30 --providers splitkv,splitkv-prefix --special --labels 8x327600 '48 in 6' --heads 12 --out \$STEP_OUT --tag h200_mla_cascade_v0.2.35")
steps+=("150:ncu_q4_ragged:NCU_SOURCE=1 bash tools/ncu_kernel.sh q4_ragged mla_warp_specialized_loop --heads 12 --qlen 4 --seq-lens 1 63 64 65 4096 4097 65536 327600 && python3 tools/ncu_stalls.py \$STEP_OUT/q4_ragged_sass.csv 2>&1 | head -80; rm -f \$STEP_OUT/*.ncu-rep; gzip -f \$STEP_OUT/*.csv")
bash tools/device_steps.sh "${steps[@]}"
