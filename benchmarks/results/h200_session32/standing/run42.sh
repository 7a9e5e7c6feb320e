# Session 32, call 6: issue 5's standing at v0.2.33 (MLA ragged / one-long at qlen 1, 2, 4 with
# the Triton peer; the MLA cascade; GQA ragged / one-long with the peer).
steps=()
steps+=("70:mla_standing:python3 -m splitkv bench --rep-ms 30 --providers splitkv,triton-peer --special --labels ragged 1x --heads 12 --qlen 1 2 4 --out \$STEP_OUT --tag h200_mla_standing_v0.2.33")
steps+=("70:mla_cascade:python3 -m splitkv bench --rep-ms 30 --providers splitkv,splitkv-prefix --special --labels 8x327600 '48 in 6' --heads 12 --out \$STEP_OUT --tag h200_mla_cascade_v0.2.33")
steps+=("60:gqa_standing:python3 -m splitkv bench --rep-ms 30 --kind gqa --providers splitkv,triton-peer --special --labels ragged 1x131072 --models llama3-8b gpt-oss llama3-70b-tp8 --out \$STEP_OUT --tag h200_gqa_standing_v0.2.33")
bash tools/device_steps.sh "${steps[@]}"
