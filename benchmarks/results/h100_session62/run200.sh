# Session 62's last device time (carry run200.sh; asks for an H200, ~200 s of the 299 left):
# the copy height on the H200, `--ablation copy_rows` (its default: whole blocks everywhere)
# and, if it fits, `copy_rows_held_out` at 12 and 16 heads (there the default is 64 rows, so
# the trials read 64 / 64 / 32: compare its "copy rows 64" with run195-style 16-row rows of
# the first part). Predictions: docs/perf.md "Session 62: predictions for run200".
CALL_LIMIT=190
source tools/device_call.sh
fits 90 copy_rows && bench copy_rows $((CALL_LIMIT - SECONDS - 5)) --ablation copy_rows --rep-ms 10
pack_logs
