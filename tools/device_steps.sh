#!/usr/bin/env bash
# Several measurements in one device call (each call starts a machine: see docs/gpu.md).
#   bash tools/device_steps.sh SECONDS:NAME:COMMAND [SECONDS:NAME:COMMAND ...]
# Runs each COMMAND under `timeout SECONDS` with its output in $OUT/steps/NAME.log and its files
# in $STEP_OUT (= $OUT/steps/NAME), then packs $OUT/steps into $OUT/steps.tgz: the device tool
# returns at most 8 files, and a step cut short by its timeout still leaves what it wrote.
set -uo pipefail
out=${OUT:-benchmarks/results/steps}
mkdir -p "$out/steps"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
status=0
for step in "$@"; do
  seconds=${step%%:*}
  rest=${step#*:}
  name=${rest%%:*}
  command=${rest#*:}
  export STEP_OUT=$out/steps/$name
  mkdir -p "$STEP_OUT"
  echo "=== $name (limit ${seconds}s): $command" | tee -a "$out/steps.log"
  start=$SECONDS
  timeout --signal=INT --kill-after=10 "$seconds" bash -c "$command" >"$out/steps/$name.log" 2>&1
  rc=$?
  echo "=== $name: exit $rc after $((SECONDS - start))s" | tee -a "$out/steps.log"
  tail -n 25 "$out/steps/$name.log"
  (( rc != 0 )) && status=$rc
done
tar czf "$out/steps.tgz" -C "$out" steps && rm -rf "$out/steps"
exit $status
