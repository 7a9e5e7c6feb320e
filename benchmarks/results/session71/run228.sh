# Session 71: issue 5's standing on the lease's GPU at the new default (lead 1), with the peer.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
fits 150 standing && bench standing 170 --rep-ms 20 --providers splitkv,triton-peer \
  --special --labels ragged 1x --heads 12 --qlen 1 2 4
pack_logs
