#!/usr/bin/env bash
# Issue 15, one device lease: kdiff GPU tests, W4 and W2 solve before/after (the old engine
# unpacked in .gl/before: `git archive REV engine benchmarks | tar -x -C .gl/before`, carried),
# ncu time per kernel and the full sections of one lanes32 launch, before and after; `sweep`:
# W2 and W4 (new engine) under tier-related settings (SWEEP: NAME=VALUE settings, one a run).
#   DEADLINE=540 scripts/probe/kdiff_s7.sh [tests|times|ncu|w2ncu|sweep]...
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${OUT:-$PWD/gpu-out}"; export OUT; mkdir -p "$OUT"
[[ -d /tmp/site/numpy ]] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1
NOW=/tmp/site:$PWD; OLD=/tmp/site:$PWD/.gl/before
DEADLINE=${DEADLINE:-540}
left() { local l=$((DEADLINE - SECONDS)); (( l > $1 )) && l=$1; echo $(( l > 1 ? l : 1 )); }
steps="${*:-tests times ncu}"
run() {  # run NAME PYPATH FLAGS WORK [NAME=VALUE...]
  local name=$1 path=$2 flags=$3 work=$4; shift 4
  echo "== $name ($flags, $work${*:+; $*})"
  PYTHONPATH=$path timeout "$(left 150)" python3 scripts/probe/kdiff_profile.py "$flags" "$work" "$@" 2>&1 | tail -n 2 | tee "$OUT/$name.txt"
}
if [[ $steps == *tests* ]]; then
  echo "== kdiff gpu tests"
  PYTHONPATH=$NOW timeout "$(left 240)" python3 -m pytest -q -x -p no:cacheprovider tests/engine/kdiff/test_kdiff_cuda_gpu.py 2>&1 | tail -n 4
fi
if [[ $steps == *times* ]]; then
  for rep in 1 2; do
    run "w4-before-$rep" "$OLD" default W4
    run "w4-after-$rep" "$NOW" default W4
    run "w2-before-$rep" "$OLD" default W2
    run "w2-after-$rep" "$NOW" default W2
  done
  grep -h "seconds=" "$OUT"/w[24]-*.txt
fi
if [[ $steps == *sweep* ]]; then
  SWEEP=${SWEEP:-"KDIFF_CUDA_CHUNK_OVERLAP_RATIO=8 KDIFF_CUDA_CHUNK_OVERLAP_RATIO=16 KDIFF_CUDA_BITPARALLEL_TIERS=((4,256),(6,384),(8,512),(16,1024),(64,4096))"}
  i=0
  for setting in "" $SWEEP; do
    i=$((i + 1))
    for work in W2 W4; do run "sweep$i-$work" "$NOW" default "$work" $setting; done
  done
  grep -H "seconds=" "$OUT"/sweep*.txt
fi
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
if [[ $steps == *" ncu"* || $steps == ncu* ]] && [[ -n $NCU ]]; then
  for side in ${NCU_SIDES:-after before}; do
    path=$NOW; [[ $side == before ]] && path=$OLD
    echo "== ncu W4 $side: time per kernel"
    PYTHONPATH=$path timeout "$(left 120)" "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv \
      --log-file "$OUT/ncu-$side.csv" python3 scripts/probe/kdiff_profile.py default W4 | tail -n 1
    python3 scripts/probe/ncu_summary.py "$OUT/ncu-$side.csv" | tee "$OUT/ncu-$side.txt"
    echo "== ncu W4 $side: sections of one lanes32 launch"
    PYTHONPATH=$path bash scripts/probe/ncu_sections.sh "$NCU" lanes32 3 W4 "$OUT/ncu-sections-$side.txt" "$(left 150)"
  done
fi
if [[ $steps == *w2ncu* && -n $NCU ]]; then
  echo "== ncu W2 after: time per kernel"
  PYTHONPATH=$NOW timeout "$(left 120)" "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv \
    --log-file "$OUT/ncu-w2.csv" python3 scripts/probe/kdiff_profile.py default W2 | tail -n 1
  python3 scripts/probe/ncu_summary.py "$OUT/ncu-w2.csv" | tee "$OUT/ncu-w2.txt"
fi
echo "== done after ${SECONDS} s"
