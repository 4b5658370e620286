#!/usr/bin/env bash
# Issue 18's GPU figure on the lent machine: `bench pcr --backend cuda --workload PCR1000x20`
# (benchmarks/pcr_cuda.py: 1,000 primers in E. coli 536 x20, ipcress and multicore in the
# same run). Run from the repository root with $OUT set, carrying .whl (scripts/gpu-wheels)
# and .gl (scripts/peers-carry: ipcress and its libraries, for a machine without apt):
#
#   run(command="bash scripts/probe/pcr_gpu.sh", carry=[".whl", ".gl"])
#
# Writes $OUT/pcr-gpu.json (the bench's JSON), $OUT/pcr-gpu.log (its table) and
# $OUT/pcr-gpu-env.txt. PCR_GPU_LIMIT: seconds for the benchmark (default 480).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
t0=$SECONDS

if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site:$PWD"
else
  echo "warning: no .whl/ (run scripts/gpu-wheels here first); using the machine's numpy" >&2
  export PYTHONPATH="$PWD"
fi

# ipcress: the system's, else the carried copy (benchmarks/pcr_workload.py finds it too).
if ! command -v ipcress >/dev/null && [[ -x .gl/peers/bin/ipcress ]]; then
  export PATH="$PWD/.gl/peers/bin:$PATH"
  export LD_LIBRARY_PATH="$PWD/.gl/peers/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  ldd --version 2>&1 | head -1
  grep -m1 "model name" /proc/cpuinfo
  echo "cpus: $(nproc)"
  echo "ipcress: $(command -v ipcress || echo none)"
  ipcress --version 2>&1 | head -1   # (exits 1 by design)
  python3 -c "import sys, numpy, numba; print('python', sys.version.split()[0], '| numpy', numpy.__version__, '| numba', numba.__version__)"
} > "$OUT/pcr-gpu-env.txt" 2>&1
cat "$OUT/pcr-gpu-env.txt"
echo "== set-up: $((SECONDS - t0)) s"

limit=${PCR_GPU_LIMIT:-540}
# ipcress is single-threaded and takes minutes on x20: its row runs on all of x20 in a process
# of its own beside the others (one core of many); the primerscope rows check their products
# against ipcress's on x1.
PCR_IPCRESS_COPIES=20 timeout "$limit" python3 -m benchmarks pcr --backend cuda \
  --workload PCR1000x20 --case ipcress --json-out "$OUT/pcr-gpu-ipcress.json" \
  > "$OUT/pcr-gpu-ipcress.log" 2>&1 &
peer=$!
PCR_IPCRESS_COPIES=1 timeout "$limit" python3 -m benchmarks pcr --backend cuda \
  --workload PCR1000x20 --case "primerscope" --json-out "$OUT/pcr-gpu.json" 2>&1 \
  | tee "$OUT/pcr-gpu.log"
rc=${PIPESTATUS[0]}
echo "== primerscope rows: exit $rc after $((SECONDS - t0)) s"
wait $peer
echo "== ipcress x20: exit $? after $((SECONDS - t0)) s"
cat "$OUT/pcr-gpu-ipcress.log"
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
rows = {}
for name in ("pcr-gpu.json", "pcr-gpu-ipcress.json"):
    try:
        data = json.load(open(f"{out}/{name}"))
    except (OSError, ValueError):
        continue
    for r in data.get("rows", []):
        rows[r.get("name")] = r
def sec(case):
    return (rows.get(case) or {}).get("seconds")
ip = sec("ipcress (CLI)")
for case in ("primerscope pcr cuda (CLI)", "primerscope pcr cuda (solve)",
             "primerscope pcr multicore (CLI)"):
    s = sec(case)
    if ip and s:
        print(f"{case}: {s:.3f} s vs ipcress x20 {ip:.1f} s: {ip / s:.1f}x")
PY
exit $rc
