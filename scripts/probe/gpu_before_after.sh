#!/usr/bin/env bash
# GPU before/after on the lent machine (issue #29's W4, T3x20, PCR1000x20): this checkout vs an
# old one unpacked in .gl/baseline, each case run by both trees one after the other, so that the
# two share the machine's state. Make the baseline here first:
#   mkdir -p .gl/baseline && git archive OLD engine benchmarks app pyproject.toml | tar -x -C .gl/baseline
# and carry it with `carry: [".whl", ".gl/baseline"]`. JSON and logs go to $OUT.
#   scripts/probe/gpu_before_after.sh "kdiff --workload W4 --case cuda+neighbours+word32" ...
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
[[ -d /tmp/site/numpy ]] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
ln -sfn "$PWD/resources" .gl/baseline/resources
n=0
for args in "$@"; do
  n=$((n + 1))
  for tree in main baseline; do
    dir=$PWD; [[ $tree == baseline ]] && dir=$PWD/.gl/baseline
    echo "== $n $tree: $args"
    (cd "$dir" && PYTHONPATH="/tmp/site:$dir" timeout "${STEP_LIMIT:-240}" python3 -m benchmarks \
        $args --backend cuda --json-out "$OUT/$n-$tree.json" 2>&1 | grep -v running | tail -n 25)
  done
done
