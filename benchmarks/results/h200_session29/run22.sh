steps=()
steps+=("240:ab:QLENS='1 2 4 8' python3 run19_ab.py")
# One kv head: num_programs + batch = whole waves (2 an SM at 32 and 64 rows: 264 slots;
# 3 an SM at 16 rows: 396), beside the default 264.
X="FACTORS='' ONE_KV_FACTORS='' MODELS=llama3-70b-tp8"
steps+=("60:waves_q4:$X QLEN=4 EXTRA_PROGRAMS='256 216 520' python3 run18_gqa.py")
steps+=("60:waves_q1:$X QLEN=1 EXTRA_PROGRAMS='388 348' python3 run18_gqa.py")
steps+=("170:maxnreg:python3 run22_maxnreg.py")
bash tools/device_steps.sh "${steps[@]}"
