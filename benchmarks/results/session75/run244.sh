# Session 75 (carry run244.sh and .peers; either GPU; written after the session's device time
# ran out). On an H200 first issue 5's standing (`issue5_on_h200`).
# run243's timeline of the default merge sized by partials (one-long, 12 heads x qlen 4): its
# last programs are the long request's rows of the last column slice, starting 6 us after the
# first wait's end: the grid is (programs, slices) and launches programs first, so slice 7's
# long slots come after 7 x 960 programs. `slices` (a src_variant of merge_by_length.py) reads
# the launch index (x + y * X) as program-major, slice-minor: every slice of the long slots
# launches first. Interpreter: tests/test_merge_by_length.py 13 passed on the variant; sm_90
# build 167 registers as the default (`tools/inspect_merge.py --block-d 64 --heads 12 --qlen 4
# --rows 4 --long-partials 16` with PYTHONPATH at the variant).
# `slices_rev` (a src_variant of merge.py, the old one-row merge that ragged batches within the
# long slots keep): the same slice-minor launch order with the balanced schedule's requests
# last-first, so the ragged batch's long request (the last of 8) launches its rows of every
# slice first (run240's `rev` alone moved nothing: slice 7's sweep still came last). The
# interpreter's tests/test_balanced_schedule.py: 123 passed on it.
# 1. GPU tests of the merge on `slices`.
# 2. The default against `slices` and `slices_rev`, two rounds, ragged and one-long, 12 / 16 /
#    128 heads x qlen 2 / 4 / 8, `--merge-time` (`slices` leaves ragged at 132 programs on
#    the old merge: a control there; `slices_rev` leaves the merge sized by partials alone).
# 3. The merge stamps of both (`tools/kernel_timeline.py --merge-stamps`, one-long qlen 4).
# Predictions: docs/perf.md "Session 75: predictions for run244". ~430 s on an H100.
CALL_LIMIT=${CALL_LIMIT:-560}
source tools/device_call.sh
issue5_on_h200
src_variant slices merge_by_length.py \
  's|^    program = tl.program_id(0)$|    program = (tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)) // tl.num_programs(1)|; s|^    slice_id = tl.program_id(1)  # which BLOCK_D columns$|    slice_id = (tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)) % tl.num_programs(1)|'
src_variant slices_rev merge.py \
  's|^    row_id = tl.program_id(0)  # request \* ROWS + row$|    row_id = (tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)) // tl.num_programs(1)|; s|^    slice_id = tl.program_id(1)  # which BLOCK_D columns$|    slice_id = (tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)) % tl.num_programs(1)|; s|^    request = row_id // ROWS$|    request = (batch - 1 - row_id // ROWS) if BALANCED else row_id // ROWS|'
fits 90 tests && PYTHONPATH=/tmp/slices/src timeout 90 python3 -m pytest tests/test_merge_by_length.py -q -n 8 \
  -p no:cacheprovider > "$L/tests.txt" 2>&1; tail -n 2 "$L/tests.txt"
M="--rep-ms 20 --merge-time --providers splitkv --special --labels ragged 1x --heads 12 16 128 --qlen 2 4 8"
for r in 1 2; do
  fits 100 base_$r && bench base_$r 110 $M
  fits 100 slices_$r && PYTHONPATH=/tmp/slices/src bench slices_$r 110 $M
  fits 100 slices_rev_$r && PYTHONPATH=/tmp/slices_rev/src bench slices_rev_$r 110 $M
done
for v in base slices; do
  src=$PWD/src; [ $v = slices ] && src=/tmp/slices/src
  fits 60 timeline_$v && PYTHONPATH=$src timeout 60 python3 tools/kernel_timeline.py --shape one-long \
    --qlen 4 --merge-stamps --out "$L/timeline_$v" > "$L/timeline_$v.txt" 2>&1
  grep -m2 -e "run (graph" -e "merge programs" "$L/timeline_$v.txt" | cut -c1-300
done
pack_logs
