#!/usr/bin/env bash
# kdiff bitparallel on the lent GPU (issue 15): the gpu-marked kdiff tests, W4 solve time
# before (word32, as before the 64-bit lanes and the neighbour bounds) and after (the
# registry's default flags), then Nsight Compute's time per kernel for both. Carry .whl/
# (scripts/gpu-wheels). Logs go to $OUT (default ./gpu-out). Stays under ~9 minutes on an
# H100: each step gets what is left of DEADLINE seconds (default 520).
#
#   scripts/probe/kdiff_gpu.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${OUT:-$PWD/gpu-out}"
export OUT
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1
DEADLINE=${DEADLINE:-520}

left() {  # seconds left before DEADLINE, at most $1
  local l=$((DEADLINE - SECONDS))
  (( l > $1 )) && l=$1
  echo $(( l > 1 ? l : 1 ))
}

echo "== kdiff gpu tests"
GPU_STEP_LIMIT=$(left 300) scripts/gpu tests kdiff

w4() {  # w4 NAME FLAGS [NAME=VALUE...]: W4's solve time with FLAGS, one line (kdiff_profile.py)
  local name=$1 flags=$2
  shift 2
  echo "== W4 $name (flags $flags${*:+; $*})"
  timeout "$(left 120)" python3 scripts/probe/kdiff_profile.py "$flags" 48502 "$@" 2>&1 | tail -n 3 \
    | tee "$OUT/w4-$name.txt"
}
w4 before word32
w4 after default
if [[ -n $(grep -ho "digest=[0-9a-f]*" "$OUT/w4-before.txt") ]] &&
   [[ $(grep -ho "digest=[0-9a-f]*" "$OUT/w4-before.txt") == $(grep -ho "digest=[0-9a-f]*" "$OUT/w4-after.txt") ]]; then
  echo "== W4 before and after: the same c(r) profile"
else
  echo "== W4 before and after: PROFILES DIFFER (or a run failed)"
fi

NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
profile() {  # profile NAME FLAGS: ncu's time per kernel over all of W4
  if [[ -z $NCU ]]; then echo "== ncu not found"; return; fi
  echo "== ncu W4 $1 (flags $2)"
  timeout "$(left 150)" "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv \
    --log-file "$OUT/ncu-$1.csv" python3 scripts/probe/kdiff_profile.py "$2" 48502 | tail -n 1
  python3 scripts/probe/ncu_summary.py "$OUT/ncu-$1.csv" | tee "$OUT/ncu-$1.txt"
}
profile after default
(( DEADLINE - SECONDS > 60 )) && profile before word32
# What each part gives, while time is left: the 64-bit pass alone, the neighbour bounds alone,
# bisection instead of 4 points a run.
(( DEADLINE - SECONDS > 40 )) && w4 pass64 word32,word64
(( DEADLINE - SECONDS > 40 )) && w4 neighbours word32,neighbours
(( DEADLINE - SECONDS > 40 )) && w4 split2 default KDIFF_CUDA_NEIGHBOUR_SPLIT=2
grep -h "seconds=" "$OUT"/w4-*.txt
echo "== done after ${SECONDS} s"
