# Session 63's fifth call (carry run207.sh and .peers; either GPU, ~330 s): issue 5's standing
# at v0.2.75, MLA 12 heads qlen 1 / 2 / 4, ragged and one-long beside the Triton peer, then the
# cascade and the 6-group mix beside the plain kernel.
CALL_LIMIT=330
source tools/device_call.sh
bench standing 170 --rep-ms 20 --providers splitkv,triton-peer --special --labels ragged 1x \
  --heads 12 --qlen 1 2 4
fits 100 cascade && bench cascade 140 --rep-ms 20 --providers splitkv,splitkv-prefix \
  --special --labels 8x327600 48 --heads 12 --qlen 1
pack_logs
