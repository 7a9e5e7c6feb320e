# Session 76 (carry run246.sh; either GPU). run245's whole memcheck subset printed nothing in
# 470 s (cut: cold compiles under the sanitizer; session 66's run221 took 98 s on a warm cache).
# So first the subset without the sanitizer (its kernels into Triton's cache, and a check of
# its results), then under it. tests/gpu_memcheck.py now prints each part's end.
# Predicted: the plain run 150-250 s, the sanitizer's 100-200 s on the warm cache, 0 errors.
CALL_LIMIT=${CALL_LIMIT:-560}
source tools/device_call.sh
issue5_on_h200
fits 270 warm && timeout 270 python3 tests/gpu_memcheck.py > "$L/plain.txt" 2>&1
echo "plain exit $? at ${SECONDS} s"; tail -n 3 "$L/plain.txt"
left=$((CALL_LIMIT - SECONDS - 10))
fits 60 memcheck && memcheck "$left"
grep -E " s: |ERROR SUMMARY" "$L/memcheck.txt"
pack_logs
