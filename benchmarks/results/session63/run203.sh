# Session 63's first call (carry run203.sh and .peers; asks for an H200, ~560 s). On an H200:
# issue 5's standing at v0.2.74 (the last H200 figures are session 34's, v0.2.35): MLA 12 heads,
# qlen 1 / 2 / 4, ragged and one-long beside the Triton peer, the cascade (8 x 327,600 sharing
# 308,736) and the 6-group mix beside the plain kernel; then session 62's run202 first half
# (`--ablation copy_rows`, two rounds: do 16-row copies pay on the H200's 64-row tile?). On an
# H100: session 62's run201 (the 16-row Triton tile on two latent chains). Predictions:
# docs/perf.md "Session 63: predictions for run203".
source tools/device_call.sh
if grep -q H200 "$L/gpu_env.txt"; then
  bench standing 170 --rep-ms 30 --providers splitkv,triton-peer --special --labels ragged 1x \
    --heads 12 --qlen 1 2 4
  fits 120 cascade && bench cascade 120 --rep-ms 30 --providers splitkv,splitkv-prefix \
    --special --labels 8x327600 48 --heads 12 --qlen 1
  for round in 1 2; do
    fits 100 copy_rows$round && bench copy_rows$round 110 --ablation copy_rows --rep-ms 10
  done
else
  COMMON="--special --labels ragged 1x --heads 12 16 --qlen 1 --page-size 100 48 4 \
    --no-warp-specialized --providers splitkv --rep-ms 15"
  for round in 1 2; do
    fits 70 default$round && bench default$round 90 $COMMON
    fits 70 chains$round && bench chains$round 90 $COMMON --latent-chains 2 --no-page-prefetch
  done
fi
pack_logs
