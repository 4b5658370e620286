#!/usr/bin/env bash
# CPU before/after on a quiet machine (the GPU host): this checkout vs an old one unpacked in
# .gl/baseline (git archive OLD engine pyproject.toml | tar -x -C .gl/baseline), interleaved.
#   scripts/probe/before_after_cpu.sh "kdiff --workload W1 --case conventional/serial" [ROUNDS]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
args=$1; rounds=${2:-2}
ln -sfn "$PWD/resources" .gl/baseline/resources
for i in $(seq "$rounds"); do
  echo "== main $i"; PYTHONPATH="/tmp/site:$PWD" taskset -c 2,3 python3 -m benchmarks $args --json-out /tmp/m$i.json 2>&1 | grep -v running
  echo "== baseline $i"; (cd .gl/baseline && PYTHONPATH="/tmp/site:$PWD" taskset -c 2,3 python3 -m engine.bench $args --json-out /tmp/b$i.json 2>&1 | grep -v running)
done
