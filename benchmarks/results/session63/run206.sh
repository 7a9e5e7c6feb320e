# Session 63's fourth call, run inline on the warm H100 after run205's memcheck ran out of its
# 300 s on a cold compile cache: `CALL_LIMIT=500; source tools/device_call.sh; memcheck 450;
# pack_logs`.
CALL_LIMIT=500
source tools/device_call.sh
memcheck 450
pack_logs
