#!/usr/bin/env bash
# Issue 17: does pcr's GPU search slow down on long records? PCR1000's 1,000 primers
# (--max-edits 3, both strands, cuda) against synthetic stores of the same size made of
# few long records and of many short ones, each slice logged (scripts/probe/pcr_slices.py).
#   LONG_MB=600 scripts/probe/pcr_long.sh "5 60"      (record counts to try)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${OUT:-$PWD/gpu-out}"; mkdir -p "$OUT"
[[ -d /tmp/site/numpy ]] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1
MB=${LONG_MB:-600}
DATA=$PWD/.gl/long; mkdir -p "$DATA"
python3 -c "
import benchmarks.pcr_workload as pw, benchmarks.pcr_cuda as pc, shutil
shutil.copy(pw.folder(pc.PCR1000X20) / 'primers.csv', '$DATA/primers.csv')"
for n in ${1:-5 60}; do
  fa=$DATA/s$MB-c$n.fa; st=$DATA/s$MB-c$n.psg
  if [[ ! -s $st ]]; then
    python3 -c "
import time
from benchmarks import data
t = time.perf_counter()
data.write_synthetic_fasta('$fa', int($MB * 1e6), seed=17, chromosomes=$n, n_runs=False)
print('fasta', round(time.perf_counter() - t, 1), 's')"
    python3 -m engine.cli index "$fa" -o "$st" --no-progress | tail -n 1; rm -f "$fa"
  fi
  echo "== pcr vs $MB Mb in $n records"
  s=$SECONDS
  timeout "${STEP_LIMIT:-120}" python3 scripts/probe/pcr_slices.py "$OUT/slices-c$n.log" pcr "$DATA/primers.csv" "$st" \
    --max-edits 3 --max-3prime-edits 3 --min-product 250 --max-product 800 --backend cuda --no-progress \
    --json -o "$DATA/pcr-c$n.json" > "$OUT/pcr-c$n.log" 2>&1
  echo "rc $? after $((SECONDS - s)) s"; tail -n 2 "$OUT/pcr-c$n.log"
  grep -c slice "$OUT/slices-c$n.log"; grep plan "$OUT/slices-c$n.log" | head -n 4; tail -n 3 "$OUT/slices-c$n.log"
done
echo "== done after ${SECONDS} s"
