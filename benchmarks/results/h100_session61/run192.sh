# Session 61, third call on the warm machine (carry run192.sh, ~90 s): is run190's page-100
# slowdown at qlen 4 (the Triton tiles) the key-by-key page ids or the Triton tile itself?
# MLA 12 heads x qlen 4, ragged and one-long, on the Triton tiles at pages 64, 4 and 100.
CALL_LIMIT=300
source tools/device_call.sh
bench triton 200 --special --labels ragged 1x --heads 12 --qlen 4 --page-size 64 4 100 \
  --no-warp-specialized --rep-ms 30
pack_logs
