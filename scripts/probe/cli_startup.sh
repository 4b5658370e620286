#!/usr/bin/env bash
# Issue 16: the W2 CLI run's start-up on CUDA, into $OUT (default ./gpu-out):
#   w2time.txt      wall of 3 runs (after one that fills numba's cache), the solve seconds of
#                   each from its JSON, and wall minus solve (the goal: <= 1.0 s); first as
#                   the machine is, then with every module's bytecode compiled (.whl/ installs
#                   with --no-compile, and where PYTHONDONTWRITEBYTECODE is set, as on the
#                   2-core machine, Python compiled numpy, Biopython and the engine from source
#                   at each run: ~0.5 s of start-up there; an installed primerscope has them)
#   (the files below: with the bytecode compiled)
#   w2imp-top.txt   -X importtime: total, and the 15 largest by cumulative time (w2imp.txt: all)
#   w2prof.txt      cProfile, the top 30 by cumulative time
#   w2timeline.txt  scripts/probe/cli_startup.py: the CUDA context thread, imports, loading,
#                   numba's set-up, the Device, and each kernel loaded at its first launch
# Start it on the GPU machine from the checkout (with .whl/, see scripts/gpu-wheels).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${OUT:-$PWD/gpu-out}"; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  [[ -d /tmp/site/numpy ]] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site:$PWD"
else
  echo "warning: no .whl/ here (scripts/gpu-wheels); using the machine's numpy" >&2
  export PYTHONPATH="$PWD"
fi
D=$(python3 -c "from benchmarks import data; print(data.DEMO_DIR)")
A=(kdiff "$D/lambda_NC_001416.fa" "$D/ecoli536_NC_008253.fna.gz" -k 100 --strands forward
   --target-region 1-43606 --background-region 1-241494 --backend cuda --variant bitparallel
   --json --no-progress)
W=/tmp/w2startup
mkdir -p "$W"

python3 -m engine.cli "${A[@]}" -o "$W/fill.json" || echo "the cache-filling run failed: rc=$?"
three_runs() {
  for i in 1 2 3; do
    s=$(date +%s.%N)
    python3 -m engine.cli "${A[@]}" -o "$W/run$i.json"
    rc=$?
    e=$(date +%s.%N)
    python3 - "$s" "$e" "$rc" "$W/run$i.json" <<'PY'
import json, sys
s, e, rc, path = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    solve = json.load(open(path))["seconds"]
except (OSError, ValueError, KeyError):
    print(f"wall {e - s:.3f} s, rc {rc}, no JSON")
else:
    print(f"wall {e - s:.3f} s, solve {solve:.3f} s, wall - solve {e - s - solve:.3f} s, rc {rc}")
PY
  done
}
{
  echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset}; numpy's bytecode present:" \
       "$(python3 -c 'import importlib.util, os, numpy; print(os.path.exists(importlib.util.cache_from_source(numpy.__file__)))')"
  echo "as the machine is:"
  three_runs
  python3 -m compileall -q -j 0 $( [[ -d /tmp/site ]] && echo /tmp/site ) engine >/dev/null
  echo "with the bytecode of /tmp/site and engine/ compiled (python3 -m compileall):"
  three_runs
} > "$OUT/w2time.txt"
cat "$OUT/w2time.txt"

python3 -X importtime -m engine.cli "${A[@]}" -o "$W/imp.json" 2> "$OUT/w2imp.txt"
python3 - "$OUT/w2imp.txt" > "$OUT/w2imp-top.txt" <<'PY'
import re, sys
rows = []
for line in open(sys.argv[1]):
    m = re.match(r"import time:\s+(-?\d+) \|\s+(-?\d+) \|( *)(\S+)", line)
    if m:
        rows.append((int(m[2]), int(m[1]), len(m[3]) // 2, m[4]))
print(f"{len(rows)} modules, {sum(r[1] for r in rows) / 1e3:.0f} ms of import time in all "
      "(threads interleave: a module's time includes the other thread's work meanwhile)")
print(f"{'cumulative':>12} {'self':>9}  depth module")
for cum, own, depth, name in sorted(rows, reverse=True)[:15]:
    print(f"{cum / 1e3:9.1f} ms {own / 1e3:6.1f} ms  {depth:>5} {name}")
heavy = ("PySide6", "app", "pandas", "dask", "Bio", "scipy")
print("imported (or tried: a failed import is listed too) of", ", ".join(heavy) + ":",
      sorted({r[3] for r in rows if r[3].split(".")[0] in heavy}) or "none")
PY
cat "$OUT/w2imp-top.txt"

python3 -m cProfile -o "$W/cli.prof" -m engine.cli "${A[@]}" -o "$W/prof.json"
python3 -c "import pstats, sys; pstats.Stats(sys.argv[1]).sort_stats('cumtime').print_stats(30)" \
  "$W/cli.prof" > "$OUT/w2prof.txt"

python3 scripts/probe/cli_startup.py "${A[@]}" -o "$W/timeline.json" > "$OUT/w2timeline.txt" 2>&1
cat "$OUT/w2timeline.txt"
