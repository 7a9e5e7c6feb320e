# Session 71: the shared-prefix batches on the lease's GPU at the new default (issued inline,
# `CALL_LIMIT=200`; run229a was the same command with `--providers splitkv` alone, the plain kernel).
CALL_LIMIT=${CALL_LIMIT:-200}
source tools/device_call.sh
bench prefix 150 --rep-ms 20 --providers splitkv,splitkv-prefix --special --labels 8x327600 48 --heads 12 --qlen 1
pack_logs
