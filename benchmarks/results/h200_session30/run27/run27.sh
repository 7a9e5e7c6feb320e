steps=()
U="UNIFORM='65536x1 131072x1 131072x2 65536x4 32768x8 131072x8'"
X="FACTORS='0.25 0.5 1' STAGES='2 3' BLOCK_NS='64' D64_BLOCK_NS='64 128'"
# Uniform batches of the 8-kv-head models: fewer splits on the balanced tile (3 stages, prefetch).
for q in 1 4 8; do
  steps+=("120:u8kv_q$q:MODELS='llama3-8b gpt-oss' $X $U QLEN=$q python3 run18_gqa.py")
done
# One kv head at 32 and 64 rows, batches of 2-8.
for q in 4 8; do
  steps+=("60:u1kv_q$q:MODELS=llama3-70b-tp8 FACTORS='' ONE_KV_FACTORS='0.5 1' STAGES='2 3' BLOCK_NS='64' UNIFORM='131072x2 65536x4 32768x8 65536x8' QLEN=$q python3 run18_gqa.py")
done
# The 16-row ragged grid again (session 30 first run: 300 programs 3-7% faster on the ragged batch).
for q in 1 2; do
  steps+=("40:grid_q$q:MODELS=llama3-70b-tp8 FACTORS='' ONE_KV_FACTORS='' QLEN=$q EXTRA_PROGRAMS='280 300 320 388' python3 run18_gqa.py")
done
bash tools/device_steps.sh "${steps[@]}"
