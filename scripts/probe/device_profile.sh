#!/usr/bin/env bash
# One device lease's profiling batch for issues 15/16 (logs to $OUT): cProfile of kmismatch
# T3x20 and edit.verify R1000, nsys kernel/memcpy split of kdiff W4 and kmismatch T3x20,
# and the CLI W2 start-up split (wall, -X importtime, cProfile).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${OUT:-$PWD/gpu-out}"; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1
what="${1:-all}"
if [[ $what == all || $what == e2e ]]; then
  timeout 240 python3 scripts/probe/e2e_profile.py kmismatch 30 > "$OUT/km.txt" 2>&1; echo "km rc=$?"
  timeout 150 python3 scripts/probe/e2e_profile.py verify 30 > "$OUT/verify.txt" 2>&1; echo "verify rc=$?"
fi
if [[ $what == all || $what == cli ]]; then
  D=$(python3 -c "from benchmarks import data; print(data.DEMO_DIR)")
  A=(kdiff "$D/lambda_NC_001416.fa" "$D/ecoli536_NC_008253.fna.gz" -k 100 --strands forward
     --target-region 1-43606 --background-region 1-241494 --backend cuda --variant bitparallel
     --json --no-progress)
  python3 -m engine.cli "${A[@]}" -o /tmp/w2a.json
  for i in 1 2; do /usr/bin/time -f "%e s wall" python3 -m engine.cli "${A[@]}" -o /tmp/w2.json; grep -o '"seconds": [0-9.]*' /tmp/w2.json; done > "$OUT/w2time.txt" 2>&1
  python3 -X importtime -m engine.cli "${A[@]}" -o /tmp/w2b.json 2> "$OUT/w2imp.txt"
  python3 -m cProfile -o /tmp/w2cli.prof -m engine.cli "${A[@]}" -o /tmp/w2c.json
  python3 -c "import pstats; pstats.Stats('/tmp/w2cli.prof').sort_stats('cumtime').print_stats(45)" > "$OUT/w2prof.txt"
fi
if [[ $what == all || $what == nsys ]]; then
  timeout 200 nsys profile -o /tmp/w4 -f true -t cuda --stats=true python3 scripts/probe/kdiff_profile.py word32 48502 > "$OUT/w4nsys.txt" 2>&1; echo "w4 nsys rc=$?"
fi
