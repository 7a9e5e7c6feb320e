# Next session, call 2: the cascades planned with and without the calls' lengths
# (run43_cascade_lengths.py), the num_splits == 1 specialisation (run44_one_split.py), both in
# h200_session32/next/, and the MLA cascade at v0.2.35. Copy them to the repository root.
steps=()
steps+=("140:cascade_lengths:python3 run43_cascade_lengths.py")
steps+=("100:one_split:python3 run44_one_split.py")
steps+=("70:mla_cascade:python3 -m splitkv bench --rep-ms 30 --providers splitkv,splitkv-prefix --special --labels 8x327600 '48 in 6' --heads 12 --out \$STEP_OUT --tag h200_mla_cascade_v0.2.35")
bash tools/device_steps.sh "${steps[@]}"
