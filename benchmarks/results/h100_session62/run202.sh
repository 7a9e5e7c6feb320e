# For session 63 on an H200 (carry run202.sh; ~400 s): the copy height there, where the default
# is whole blocks everywhere. `--ablation copy_rows` (issue 5's batches on each Gluon consumer)
# and `copy_rows_held_out` (seeded batches of each 64-row height, default 64 against 64 / 32 /
# 16), two rounds each if they fit. Rule (as the H100's, docs/perf.md session 61-62): 16 rows
# become the H200's `wide_copy_rows` if they lead the default by >= 1% in the geomean of the
# 64-row tile's batches in both rounds of copy_rows, no batch more than 1.5% behind, and hold in
# the held-out rounds.
source tools/device_call.sh
for round in 1 2; do
  fits 80 copy_rows$round && bench copy_rows$round 120 --ablation copy_rows --rep-ms 10
done
for round in 1 2; do
  fits 140 held_out$round && bench held_out$round 200 --ablation copy_rows_held_out --rep-ms 10
done
pack_logs
