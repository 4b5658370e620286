#!/usr/bin/env bash
# Nsight Compute's full set, with the per-instruction source counters, of one launch of a
# kdiff CUDA kernel; writes the report, the details page and the SASS page (executed
# instructions, thread-instructions and warp stall samples per instruction) as CSV:
#   bash scripts/probe/ncu_source.sh NCU KERNEL_REGEX LAUNCH_SKIP WORKLOAD FLAGS OUT_PREFIX SECONDS
# (PROBE_ALL_K=1 in the environment profiles a kdiff --all-k run, see kdiff_profile.py;
# LAUNCHES=N profiles N launches from LAUNCH_SKIP on.)
# The CSV has one row an SASS instruction: sort by "Instructions Executed" to find the hot loop.
set -uo pipefail
ncu=$1 kernel=$2 skip=$3 work=$4 flags=$5 out=$6 limit=$7
timeout "$limit" "$ncu" --clock-control none -k "regex:$kernel" --launch-skip "$skip" \
  --launch-count "${LAUNCHES:-1}" --set full --import-source no -f -o "$out" \
  python3 scripts/probe/kdiff_profile.py "$flags" "$work" > "$out.log" 2>&1
tail -n 3 "$out.log"
"$ncu" --import "$out.ncu-rep" --page details > "$out.details.txt" 2>&1
"$ncu" --import "$out.ncu-rep" --page source --print-source sass --csv > "$out.sass.csv" 2>&1
grep -E "Duration|Compute \(SM\) Throughput|Executed Ipc A|Issue Slots Busy|Achieved Occupancy|Theoretical Occupancy|Registers Per|No Eligible|Warp Cycles Per Issued|Executed Instructions  |Avg. Active Threads|Avg. Not Predicated|Branch Efficiency|Divergent" "$out.details.txt" | head -n 30
head -c 600 "$out.sass.csv"; echo; wc -l "$out.sass.csv"
