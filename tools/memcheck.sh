#!/usr/bin/env bash
# The GPU suite's memcheck subset (tests/gpu_memcheck.py) under compute-sanitizer: the parts
# named (`tests/gpu_memcheck.py --list`; every part where none is), each as its own sanitizer
# process, all at once. A run is mostly cold compiles, and one process compiles one kernel at
# a time: session 76's run245 ran the whole subset in one process for 470 s and did not finish.
# Each part's log is printed as a block once all have ended (or when this script is stopped),
# then one summary line; exit 9 if any part failed (a sanitizer error or a wrong result).
# torch's caching allocator hides out-of-bounds accesses from memcheck, so it is off.
# Callers set PYTHONPATH to the checkout's src/ (tools/device_check.sh, tools/device_call.sh).
subset="$(dirname "$0")/../tests/gpu_memcheck.py"
parts=("$@")
[ ${#parts[@]} -gt 0 ] || read -ra parts <<< "$(python3 "$subset" --list)"
logs=$(mktemp -d)
pids=()
rcs=()  # each part's exit, once its block is printed
for part in "${parts[@]}"; do
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 9 \
    python3 "$subset" "$part" > "$logs/$part.txt" 2>&1 &
  pids+=($!)
done

report() {  # each part's log not yet printed, then which failed; $1 = cut: parts still running
  local failed=() i
  for i in "${!parts[@]}"; do
    [ -z "${rcs[$i]}" ] || continue
    if [ "$1" = cut ] && kill -0 "${pids[$i]}" 2> /dev/null; then
      rcs[$i]=cut
    else
      wait "${pids[$i]}"
      rcs[$i]=$?
    fi
    echo "== ${parts[$i]} (exit ${rcs[$i]})"
    cat "$logs/${parts[$i]}.txt"
  done
  for i in "${!parts[@]}"; do
    [ "${rcs[$i]}" = 0 ] || failed+=("${parts[$i]}")
  done
  rm -rf "$logs"
  if [ ${#failed[@]} -eq 0 ]; then
    echo "memcheck: ${#parts[@]} parts, every one finished without errors"
  else
    echo "memcheck: ${#parts[@]} parts; not finished or failed: ${failed[*]}"
  fi
  [ ${#failed[@]} -eq 0 ]
}

trap 'report cut; kill "${pids[@]}" 2> /dev/null; exit 124' TERM INT
report done || exit 9
