#!/usr/bin/env bash
# Nsight Compute's sections (throughput, occupancy, warp states, pipes, instructions,
# scheduler, launch) of one launch of a kdiff kernel, and the lines the notes quote:
#   bash scripts/probe/ncu_sections.sh NCU KERNEL_REGEX LAUNCH_SKIP WORKLOAD OUT_FILE SECONDS
# (PYTHONPATH picks the engine; kdiff_s7.sh and kdiff_s9.sh run it before and after a change.)
set -uo pipefail
ncu=$1 kernel=$2 skip=$3 work=$4 out=$5 limit=$6
timeout "$limit" "$ncu" --clock-control none -k "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
  --section InstructionStats --section SchedulerStats --section LaunchStats \
  python3 scripts/probe/kdiff_profile.py default "$work" > "$out" 2>&1
grep -E "Duration|Compute \(SM\) Throughput|Executed Ipc A|Issue Slots Busy|Achieved Occupancy|Theoretical Occupancy|Registers Per|No Eligible|Warp Cycles Per Issued|Executed Instructions  |Grid Size|Waves Per SM|Block Limit|highest-utilized" "$out" | head -n 20
