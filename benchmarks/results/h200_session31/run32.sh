# Session 31, call 5: gpt-oss 16-row uniform batches, the full count on 64-key blocks vs the
# default (docs/perf.md "Session 31").
steps=()
steps+=("200:d64_blocks:MODELS='gpt-oss' FACTORS='1 2' STAGES='3' D64_BLOCK_NS='64 128' UNIFORM='32768x1 131072x1 262144x1 65536x2 131072x2 65536x4 32768x8' QLEN=1 python3 run18_gqa.py")
bash tools/device_steps.sh "${steps[@]}"
