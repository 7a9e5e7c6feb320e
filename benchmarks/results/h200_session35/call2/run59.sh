# Next session, call 2: the 64-row column-splitting consumer with the queries' rope part as
# S's register operand (rope_queries_in_registers.patch, compile-checked in session 34: 168
# registers, no spills in the block loop) against the committed kernel, in one lease: the patch
# applied to a copy of src/ in /tmp/alt, selected by PYTHONPATH (and pytest -o pythonpath, since
# pyproject.toml puts the checkout's src first). Copy this file to the
# repository root and carry it. Predictions: docs/perf.md "Next runs (session 34)" item 1.
P=$PWD/benchmarks/results/h200_session34/next/rope_queries_in_registers.patch
A="--rep-ms 30 --providers splitkv"
steps=()
steps+=("20:setup:rm -rf /tmp/alt && mkdir -p /tmp/alt && cp -r src /tmp/alt/ && cd /tmp/alt && (patch -p1 < $P || git apply $P) && grep -c q_pe_regs src/splitkv/kernels/mla_warp_specialized.py")
steps+=("200:tests_alt:PYTHONPATH=/tmp/alt/src python3 -c \"import splitkv.kernels.mla_warp_specialized as m; print(m.__file__)\" && python3 -m pytest -o pythonpath=/tmp/alt/src tests/test_warp_specialized.py tests/test_mla_gpu.py -n 12 -q -p no:cacheprovider > \$STEP_OUT/pytest.log 2>&1; tail -8 \$STEP_OUT/pytest.log")
for round in 1 2; do
  for tree in base alt; do
    src=$PWD/src; [[ $tree == alt ]] && src=/tmp/alt/src
    steps+=("40:${tree}_q4_r${round}:PYTHONPATH=$src python3 -m splitkv bench $A --special --labels ragged 1x --heads 12 --qlen 4 --out \$STEP_OUT --tag ${tree}_q4_r${round}")
    steps+=("40:${tree}_wide_r${round}:PYTHONPATH=$src python3 -m splitkv bench $A --heads 64 --context 8192 65536 --batch 4 --qlen 1 --out \$STEP_OUT --tag ${tree}_wide_r${round}")
  done
done
bash tools/device_steps.sh "${steps[@]}"
