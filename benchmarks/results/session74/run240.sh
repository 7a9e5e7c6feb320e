# Session 74 (carry run240.sh and .peers; either GPU; did not run in session 74: no machine).
# On an H200 first issue 5's standing and the shared-prefix batches (`issue5_on_h200`, ~300 s),
# unmeasured on an H200 since session 34. Then, on either GPU:
# 1. The GPU tests of the merge sized by partials (tests/test_merge_by_length.py, bf16 too).
# 2. The merge's launch order and program count at 12 heads, qlen 2 / 4, ragged and one-long,
#    `--merge-time`, two rounds interleaved:
#    rev: rows mapped to requests last-first (a src_variant of kernels/merge.py), so ragged's
#      long request (the last of 8) starts in the first wave and one-long's (the first of 48)
#      in the last;
#    lp16r4: `--merge-long-partials 16 --merge-rows 4` (kernels/merge_by_length.py: requests of
#      more than 16 partials one row a program on the 64-partial tile, first in the grid; the
#      rest 4 rows a program in one tile of 16; 167 registers, 1 warp);
#    lp8r8: 8 and 8 (168 registers, 1 warp);
#    lp16r8w2: 16 and 8 rows on 2 warps (162 registers; the long rows' tile split over 2 warps).
# 3. The memcheck subset (its new cases: merge_long_partials on MLA and GQA), if time is left.
# Predictions: docs/perf.md "Session 74: predictions for run240". ~250 s on an H100.
CALL_LIMIT=${CALL_LIMIT:-570}
source tools/device_call.sh
issue5_on_h200
fits 90 tests && timeout 90 python3 -m pytest tests/test_merge_by_length.py -q -n 8 -p no:cacheprovider \
  > "$L/tests.txt" 2>&1; tail -n 2 "$L/tests.txt"
src_variant rev merge.py 's|request = row_id // ROWS$|request = batch - 1 - row_id // ROWS|'
M="--rep-ms 20 --merge-time --providers splitkv --special --labels ragged 1x --heads 12 --qlen 2 4"
for r in 1 2; do
  fits 30 base_$r && bench base_$r 60 $M
  fits 30 rev_$r && PYTHONPATH=/tmp/rev/src bench rev_$r 60 $M
  fits 30 lp16r4_$r && bench lp16r4_$r 60 $M --merge-long-partials 16 --merge-rows 4
  fits 30 lp8r8_$r && bench lp8r8_$r 60 $M --merge-long-partials 8 --merge-rows 8
  fits 30 lp16r8w2_$r && bench lp16r8w2_$r 60 $M --merge-long-partials 16 --merge-rows 8 \
    --merge-num-warps 2
done
fits 250 memcheck && memcheck 240
pack_logs
