#!/usr/bin/env bash
# Issue 17 on the GPU machine, through the CLI end to end: the synthetic human-like genome
# (benchmarks.scale: SCALE_MB Mb, default 3100) made and indexed here into a store, then
#   kdiff   a 5 kb human-like target vs the store, k=5, both strands, --backend cuda
#   pcr     PCR1000's 1,000 primers (18-25 nt) vs the store, --max-edits 3, --backend cuda
#   dask    the kdiff job with --backend dask (a LocalCUDACluster: dask-cuda and its
#           dependencies carried as wheels in .gl/cluster-wheels)
#   bench   the same three as `primerscope bench scale --workload S2` (python -m benchmarks):
#           kdiff/cuda, kdiff/dask-cuda (and whether its candidates are cuda's), pcr/cuda, the
#           ratio dask-cuda vs cuda; the table in $OUT/bench.log, the JSON in
#           $OUT/bench-scale-S2.json. BENCH_ARGS adds options (e.g. "--case kdiff").
# Data stay in .gl/scale (kept on a warm machine between calls); the file names are
# benchmarks.scale's, so `store` and `bench` make each file once. scripts/gpu-wheels and
# scripts/cluster-wheels make the wheels to carry: [".whl", ".gl/cluster-wheels"].
#   scripts/probe/scale_gpu.sh store kdiff pcr dask
#   STEP_LIMIT=540 scripts/probe/scale_gpu.sh store bench
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${OUT:-$PWD/gpu-out}"; mkdir -p "$OUT"
[[ -d /tmp/site/numpy ]] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
if [[ -d .gl/cluster-wheels && ! -d /tmp/site/dask_cuda ]]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gl/cluster-wheels/*.whl
fi
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1
MB=${SCALE_MB:-3100}
DATA=$PWD/.gl/scale; mkdir -p "$DATA"
export PRIMERSCOPE_BENCH_DATA=$DATA PRIMERSCOPE_SCALE_MB=$MB
# benchmarks.scale's names (the bench step reuses these files); the target and primers are
# written here if missing.
read -r FASTA STORE TARGET PRIMERS < <(python3 -c "
from benchmarks import scale
total, target = scale.sizes()
print(scale.fasta_path(total), scale.store_path(total), scale.target_fasta(target), scale.pcr_primers())")
[[ -n ${PRIMERS:-} ]] || { echo "benchmarks.scale's file names: failed" >&2; exit 1; }
steps="${*:-store kdiff pcr dask}"
# Every step logs to $OUT as it goes and has its own limit (STEP_LIMIT seconds), so a slow
# step still leaves the others' figures.
cli() { timeout "${STEP_LIMIT:-300}" /usr/bin/time -f "%e s wall, %M KB peak RSS" python3 -m engine.cli "$@"; }
if [[ $steps == *store* ]]; then
  if [[ ! -s $FASTA ]]; then
    echo "== FASTA ($MB Mb)"
    python3 -c "
import time
from benchmarks import scale
t = time.perf_counter(); p = scale.synthetic_fasta(scale.sizes()[0]); print(p, round(time.perf_counter() - t, 1), 's')"
  fi
  echo "== index"; rm -f "$STORE"; cli index "$FASTA" -o "$STORE" --no-progress 2>&1 | tail -n 2
  python3 -c "
import time
from engine import store
t = time.perf_counter(); s = store.open_store('$STORE'); print('open', round(time.perf_counter() - t, 3), 's')"
fi
kd() {  # kd BACKEND
  echo "== kdiff $1"
  cli kdiff "$TARGET" "$STORE" -k 5 --strands both --backend "$1" --json --no-progress \
    -o "$DATA/kdiff-$1.json" > "$OUT/kdiff-$1.log" 2>&1; tail -n 3 "$OUT/kdiff-$1.log"
  python3 -c "
import json; d = json.load(open('$DATA/kdiff-$1.json'))
print('solve', d.get('seconds'), 'candidates', len(d.get('candidates', [])), 'flags', d.get('flags'), 'device', d.get('device'))" | tee "$OUT/kdiff-$1.txt"
}
[[ $steps == *kdiff* ]] && kd cuda
if [[ $steps == *stacks* ]]; then  # the pcr run with every thread's stack dumped every 20 s
  echo "== pcr cuda, stacks"
  timeout "${STEP_LIMIT:-300}" python3 scripts/probe/pcr_stacks.py "$OUT/pcr-stacks.txt" 20 \
    "$PRIMERS" "$STORE" --max-edits 3 --max-3prime-edits 3 --min-product 250 \
    --max-product 800 --backend cuda --no-progress --json -o "$DATA/pcr-cuda.json" > "$OUT/pcr.log" 2>&1
  tail -n 3 "$OUT/pcr.log"
fi
if [[ $steps == *" pcr"* || $steps == pcr* ]]; then
  echo "== pcr cuda"
  cli pcr "$PRIMERS" "$STORE" --max-edits 3 --max-3prime-edits 3 --min-product 250 \
    --max-product 800 --backend cuda --json -o "$DATA/pcr-cuda.json" > "$OUT/pcr.log" 2>&1; tail -n 3 "$OUT/pcr.log"
  python3 -c "
import json; d = json.load(open('$DATA/pcr-cuda.json'))
print('solve', d.get('seconds'), 'products', len(d.get('products', [])), 'sites', len(d.get('sites', [])))" | tee "$OUT/pcr.txt"
fi
if [[ $steps == *tiny* ]]; then  # does a LocalCUDACluster start and run a small job here?
  echo "== dask tiny"
  D=$(python3 -c "from benchmarks import data; print(data.DEMO_DIR)")
  STEP_LIMIT=120 cli kdiff "$D/lambda_NC_001416.fa" "$D/ecoli536_NC_008253.fna.gz" -k 5 --target-region 1-2000 \
    --backend dask --json -o "$DATA/tiny.json" > "$OUT/tiny.log" 2>&1; tail -n 5 "$OUT/tiny.log"
fi
[[ $steps == *dask* ]] && kd dask
if [[ $steps == *bench* ]]; then
  echo "== bench scale S2"
  timeout "${STEP_LIMIT:-300}" python3 -m benchmarks scale --workload S2 ${BENCH_ARGS:-} \
    --json-out "$OUT/bench-scale-S2.json" > "$OUT/bench.log" 2>&1
  echo "exit $?"; tail -n 16 "$OUT/bench.log"
fi
[[ $steps == *same* ]] && python3 -c "
import json; a, b = (json.load(open('$DATA/kdiff-%s.json' % x)) for x in ('cuda', 'dask'))
print('dask == cuda:', a['candidates'] == b['candidates'])"
echo "== done after ${SECONDS} s"
