# Session 78: an H200 asked for came as an H100 (run249 left unrun: its command ran only on an
# H200), so on that warm H100 (carry .peers; ~45 s), typed as the device tool's command: the GPU
# tests of the GQA files whose rules v0.2.83 changed (gqa_balanced_grid, equal_lengths) and
# the docstrings.
source tools/device_call.sh; PYTHONPATH=$PWD/src:$PWD/tests timeout 230 python3 -m pytest tests/test_gqa_decode.py tests/test_gqa_uniform_waves.py tests/test_shared_prefix_gqa.py tests/test_docstrings.py -n 8 -q -p no:cacheprovider > $L/pytest_gqa.txt 2>&1; echo "pytest exit $? at ${SECONDS} s"; tail -n 2 $L/pytest_gqa.txt; pack_logs
