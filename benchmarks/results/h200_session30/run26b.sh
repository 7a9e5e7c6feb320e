steps=()
K="MODELS=llama3-70b-tp8 FACTORS=''"
# Item 1: uniform one-kv-head batches of 2-8 requests, splits x stages x prefetch.
steps+=("150:uniform_1kv_batches:$K ONE_KV_FACTORS='0.25 0.5 1' STAGES='2 3' BLOCK_NS='64' UNIFORM='131072x2 262144x2 65536x4 131072x4 32768x8 65536x8' python3 run18_gqa.py")
# Item 2: the ragged batches' grid at 16 rows.
steps+=("60:grid_q1:$K ONE_KV_FACTORS='' QLEN=1 EXTRA_PROGRAMS='264 300 330 348 370' python3 run18_gqa.py")
steps+=("60:grid_q2:$K ONE_KV_FACTORS='' QLEN=2 EXTRA_PROGRAMS='264 300 330 348 370' python3 run18_gqa.py")
# Item 3: the 32- and 64-row uniform tiles of one kv head at batch 1.
steps+=("120:uniform_1kv_wide:$K ONE_KV_FACTORS='0.5 1' STAGES='2 3' BLOCK_NS='64 128' QLEN=4 UNIFORM='131072x1 262144x1' python3 run18_gqa.py")
steps+=("120:uniform_1kv_wide8:$K ONE_KV_FACTORS='0.5 1' STAGES='2 3' BLOCK_NS='32 64' QLEN=8 UNIFORM='131072x1 262144x1' python3 run18_gqa.py")
bash tools/device_steps.sh "${steps[@]}"
