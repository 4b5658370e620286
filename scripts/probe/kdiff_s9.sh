#!/usr/bin/env bash
# Issue 15, one device lease: where W2's and W4's solve time goes. Each step writes to $OUT:
#   times    W2 and W4 solve, REPS runs each (kdiff_profile.py default)
#   cprofile the measured solve's host side (cProfile, top functions by cumulative time)
#   compare  W2 and W4 solve, REPS runs each, the engine in $BEFORE (an old tree unpacked by
#            `git archive REV engine benchmarks | tar -x -C DIR`, resources copied) beside this one
#   ncu      Nsight Compute sections of one W2 tier8 launch (the second), before ($BEFORE) and
#            after, and the time per kernel of W4 and W2 after
#   tests    the kdiff GPU tests
#   DEADLINE=540 REPS=3 bash scripts/probe/kdiff_s9.sh [times|cprofile|compare|ncu|tests]...
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${OUT:-$PWD/gpu-out}"; export OUT; mkdir -p "$OUT"
[[ -d /tmp/site/numpy ]] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:${ENGINE:-$PWD}
DEADLINE=${DEADLINE:-540}
left() { local l=$((DEADLINE - SECONDS)); (( l > $1 )) && l=$1; echo $(( l > 1 ? l : 1 )); }
steps="${*:-times cprofile}"
WORKS=${WORKS:-"W2 W4"}
prof() { timeout "$(left "$1")" python3 scripts/probe/kdiff_profile.py default "${@:2}"; }
if [[ $steps == *tests* ]]; then
  echo "== kdiff gpu tests"
  timeout "$(left 300)" python3 -m pytest -q -x -p no:cacheprovider tests/engine/kdiff/test_kdiff_cuda_gpu.py 2>&1 | tail -n 3
fi
if [[ $steps == *compare* ]]; then
  for rep in $(seq "${REPS:-3}"); do
    for w in $WORKS; do
      echo "$w before $(PYTHONPATH=/tmp/site:$BEFORE prof 150 "$w" 2>&1 | tail -n 1)"
      echo "$w after  $(prof 150 "$w" ${SETTINGS:-} 2>&1 | tail -n 1)"
    done
  done | tee -a "$OUT/compare.txt"
fi
if [[ $steps == *times* ]]; then
  for rep in $(seq "${REPS:-3}"); do
    for w in $WORKS; do echo "$w $(prof 150 "$w" ${SETTINGS:-} 2>&1 | tail -n 1)"; done
  done | tee -a "$OUT/times.txt"
fi
if [[ $steps == *cprofile* ]]; then
  for w in $WORKS; do
    echo "== cProfile $w"
    PROBE_CPROFILE=/tmp/prof-$w prof 150 "$w" ${SETTINGS:-} | tail -n 1
    python3 -c "import pstats,sys; pstats.Stats(sys.argv[1]).sort_stats('tottime').print_stats(25)" \
      "/tmp/prof-$w" > "$OUT/cprofile-$w.txt"
    grep -A28 "ncalls" "$OUT/cprofile-$w.txt" | cut -c1-150
  done
fi
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -n 1)
if [[ $steps == *ncu* && -n $NCU ]]; then
  for side in before after; do
    path=/tmp/site:$PWD; [[ $side == before ]] && path=/tmp/site:$BEFORE
    echo "== ncu W2 tier8 $side"
    PYTHONPATH=$path bash scripts/probe/ncu_sections.sh "$NCU" tier8 1 W2 "$OUT/ncu-w2-$side.txt" "$(left 150)"
  done
  for w in W4 W2; do
    echo "== ncu $w after: time per kernel"
    timeout "$(left 120)" "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv \
      --log-file "$OUT/ncu-$w.csv" python3 scripts/probe/kdiff_profile.py default "$w" | tail -n 1
    python3 scripts/probe/ncu_summary.py "$OUT/ncu-$w.csv" | tee "$OUT/ncu-$w.txt"
  done
fi
echo "== done after ${SECONDS} s"
