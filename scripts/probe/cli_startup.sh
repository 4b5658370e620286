#!/usr/bin/env bash
# Issue 16: the W2 CLI run's start-up on CUDA, into $OUT (default ./gpu-out):
#   w2time.txt      REPS runs (default 8, after one that fills numba's cache), each split by
#                   scripts/probe/cli_clock.py into the interpreter's start, the command and the
#                   process's exit, with the solve seconds from its JSON and wall minus solve
#                   (the goal: <= 1.0 s), then the medians; with BEFORE=DIR (another checkout's
#                   root, e.g. an older commit unpacked with git archive) its runs alternate
#                   with this tree's. The bytecode of /tmp/site and engine/ is compiled first
#                   (.whl/ installs with --no-compile and the machine sets PYTHONDONTWRITEBYTECODE:
#                   ~0.5 s more a run, which an installed primerscope does not pay). Also: the
#                   number of processes on the GPU 0.3 s after each run (the driver's teardown,
#                   left to a child, engine.cuda_start.defer_teardown, must be over) and three
#                   runs whose output is read through a pipe (that child must not hold it)
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

python3 -m compileall -q -j 0 $( [[ -d /tmp/site ]] && echo /tmp/site ) engine \
  $( [[ -n ${BEFORE:-} ]] && echo "$BEFORE/engine" ) >/dev/null
NOW=$PWD
[[ -n ${BEFORE:-} ]] && BEFORE=$(cd "$BEFORE" && pwd)
clocked() {  # TREE LABEL: one run, split by the clocks
  local tree=$1 label=$2 s e rc
  rm -f "$W/$label.json"
  s=$(date +%s.%N)
  (cd "$tree" && PYTHONPATH="${PYTHONPATH/$NOW/$tree}" python3 "$NOW/scripts/probe/cli_clock.py" \
     "${A[@]}" -o "$W/$label.json" 2> "$W/clock.err")
  rc=$?; e=$(date +%s.%N)
  python3 - "$s" "$e" "$rc" "$W/$label.json" "$W/clock.err" "$label" <<'PY'
import json, sys
s, e, rc, path, err, label = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], *sys.argv[4:]
marks = {}
for line in open(err):
    if line.startswith("clock "):
        _, what, at = line.split()
        marks.setdefault(what, float(at))
    else:
        sys.stdout.write("stderr: " + line)
try:
    solve = json.load(open(path))["seconds"]
except (OSError, ValueError, KeyError):
    print(f"{label:7} wall {e - s:.3f} s, rc {rc}, no JSON")
else:
    print(f"{label:7} wall {e - s:.3f} solve {solve:.3f} wall-solve {e - s - solve:.3f} | interpreter "
          f"{marks['start'] - s:.3f} command {marks['exit'] - marks['start']:.3f} exit "
          f"{e - marks['exit']:.3f} rc {rc}")
PY
}
{
  [[ -n ${BEFORE:-} ]] && clocked "$BEFORE" before-fill
  clocked "$NOW" fill
  for r in $(seq "${REPS:-8}"); do
    [[ -n ${BEFORE:-} ]] && clocked "$BEFORE" before
    clocked "$NOW" now
    sleep 0.3
    echo "  processes on the GPU 0.3 s later: $(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)"
  done
} > "$OUT/w2time.txt"
python3 - "$OUT/w2time.txt" >> "$OUT/w2time.txt" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"(before|now)\s+wall \S+ solve \S+ wall-solve (\S+)", line)
    if m:
        runs.setdefault(m[1], []).append(float(m[2]))
for label, values in runs.items():
    print(f"{label}: wall - solve median {statistics.median(values):.3f} s, "
          f"{min(values):.3f}-{max(values):.3f} s, {len(values)} runs")
PY
if [[ -n ${BEFORE:-} ]]; then
  python3 -c "import json, sys; a, b = (json.load(open(p))['candidates'] for p in sys.argv[1:]); print('the same candidates before and now:', a == b, len(a))" \
    "$W/before.json" "$W/now.json" >> "$OUT/w2time.txt"
fi
for i in 1 2 3; do  # read through a pipe, as $(...) does: it ends when the command ends
  s=$(date +%s.%N); n=$(python3 -m engine.cli "${A[@]}" | wc -c); e=$(date +%s.%N)
  python3 -c "import sys; print(f'output read through a pipe: {sys.argv[1]} bytes, wall {float(sys.argv[3]) - float(sys.argv[2]):.3f} s')" "$n" "$s" "$e"
done >> "$OUT/w2time.txt"
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
      "(threads interleave: a module's time includes the other thread's work meanwhile; the "
      "lines of engine.cli.preload's child, which imports Biopython, are in it too)")
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
