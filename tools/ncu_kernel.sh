#!/usr/bin/env bash
# Profile one kernel of `benchmarks/profile_one.py` with ncu and write what it found as text:
#   bash tools/ncu_kernel.sh NAME KERNEL_REGEX [profile_one.py args...]
# Writes $STEP_OUT/NAME.ncu-rep, NAME_details.txt (sections, stall breakdown) and NAME_raw.csv.
# Profiles the last launch of the kernel (`--calls 2`: the first one compiles).
# NCU_SOURCE=1 adds the per-instruction stall samples (SourceCounters) as NAME_sass.csv, for
# `tools/ncu_stalls.py`: which barrier wait each warp role spends its time in. NCU_CACHE=none
# keeps the caches between kernels (ncu flushes them by default), so a kernel reading what the
# one before it wrote (the merge: stage 1's partials) finds it in L2 as it would unprofiled.
set -uo pipefail
name=$1 kernel=$2
shift 2
out=${STEP_OUT:-benchmarks/results/ncu}
mkdir -p "$out"
PYTHONPATH=$PWD/src ncu --clock-control none --cache-control "${NCU_CACHE:-all}" -k "regex:$kernel" --launch-skip 1 --launch-count 1 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
  --section Occupancy --section LaunchStats --section SchedulerStats \
  ${NCU_SOURCE:+--section SourceCounters} \
  --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,gpu__time_duration.sum,sm__cycles_active.max,sm__cycles_active.min,sm__cycles_active.avg" \
  -f -o "$out/$name" python3 benchmarks/profile_one.py "$@" 2>&1 | grep -v "^==PROF==" | tail -5
ncu -i "$out/$name.ncu-rep" --page details --print-details all >"$out/${name}_details.txt" 2>&1
ncu -i "$out/$name.ncu-rep" --page raw --csv >"$out/${name}_raw.csv" 2>&1
if [[ -n ${NCU_SOURCE:-} ]]; then
  ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass >"$out/${name}_sass.csv" 2>&1
fi
grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Hit|Registers|Achieved Occupancy|issue_stalled|Warp Cycles Per Issued|Issued Ipc|No Eligible|sm__cycles_active" \
  "$out/${name}_details.txt" | head -60
