# Session 63's second call (carry run204.sh and ab_base, HEAD's src before the balanced two-chain
# rule; either GPU, ~520 s). Predictions: docs/perf.md "Session 63: predictions for run204".
# (1) the GPU tests of odd pages and of the planner; (2) the rule as the default, new against
# old, 12 and 16 heads x qlen 1, ragged and one-long, pages 100 / 48 / 4; (3) qlen 2's 32-row
# balanced tile: default against two chains without the look-ahead on 64- and 32-key blocks,
# two rounds; (4) the 16-row Triton tile at page 64 without bulk copies (GPUs without the copy
# engine): old form against new; (5) uniform 16-head splits at page 100: page ids ahead (32-key
# blocks, 3 stages) against none (64-key blocks, 2 stages).
source tools/device_call.sh
PYTHONPATH=$PWD/src:$PWD/tests timeout 150 python3 -m pytest tests/test_any_page_size.py \
  tests/test_planner.py -n 8 -q -p no:cacheprovider > $L/pytest.txt 2>&1
echo "pytest exit $? at ${SECONDS} s"; tail -n 1 $L/pytest.txt
Q1="--special --labels ragged 1x --heads 12 16 --qlen 1 --page-size 100 48 4 \
  --no-warp-specialized --providers splitkv --rep-ms 15"
fits 50 q1_new && bench q1_new 60 $Q1
fits 50 q1_old && PYTHONPATH=$PWD/ab_base/src bench q1_old 60 $Q1
Q2="--special --labels ragged 1x --heads 12 16 --qlen 2 --page-size 100 48 4 \
  --no-warp-specialized --providers splitkv --rep-ms 15"
for round in 1 2; do
  fits 50 q2_default$round && bench q2_default$round 60 $Q2
  fits 50 q2_chains64_$round && bench q2_chains64_$round 60 $Q2 --latent-chains 2 \
    --no-page-prefetch --block-n 64
  fits 50 q2_chains32_$round && bench q2_chains32_$round 60 $Q2 --latent-chains 2 \
    --no-page-prefetch
done
P64="--special --labels ragged 1x --heads 12 16 --qlen 1 --page-size 64 --no-warp-specialized \
  --no-kv-tma --providers splitkv --rep-ms 15"
fits 30 p64_new && bench p64_new 40 $P64
fits 30 p64_old && PYTHONPATH=$PWD/ab_base/src bench p64_old 40 $P64
U="--heads 16 --context 8192 68096 --batch 8 48 --qlen 1 --page-size 100 --no-warp-specialized \
  --providers splitkv --rep-ms 15"
fits 30 uniform_ahead && bench uniform_ahead 40 $U
fits 30 uniform_not_ahead && bench uniform_not_ahead 40 $U --no-page-prefetch
pack_logs
