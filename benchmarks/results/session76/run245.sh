# Session 76 (carry run245.sh; either GPU). The whole memcheck subset under compute-sanitizer:
# session 75's `corrupted()` (tests/gpu_memcheck.py: one helper builds the bad page table and
# lengths for gqa_decode_corrupt, mla_decode_corrupt and the kv_tma case) has run only on the
# CPU. Predicted: 0 errors, as at session 74's full subset; >240 s on a cold compile cache.
CALL_LIMIT=${CALL_LIMIT:-580}
source tools/device_call.sh
issue5_on_h200
fits 470 memcheck && memcheck 470
pack_logs
