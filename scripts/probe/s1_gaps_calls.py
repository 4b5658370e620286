"""Where S1's streamed kdiff spends its CPU, with gaps or without (issue #28): every
``cpu_lanes.lanes_parallel`` call (by word bits and lanes: calls, lane-columns, CPU and wall
seconds, CPU ns per lane-column) and the blocked kernel's starts, for one store, streamed in 3
chunks a strand as scripts/probe/s1_gaps.py streams it. Run it on the store with N runs and on
the one without, alternated; compare CPU per lane-column and lane-columns per non-gap base.

    PYTHONPATH=. python scripts/probe/s1_gaps_calls.py STORE [target_length]
"""
import sys, time, collections
from engine import config
from benchmarks import data
from engine import kdiff
from engine.sequences import load
from engine.kdiff import cpu_lanes, driver
path, tlen = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5000
target = [data.synthetic_region(tlen, seed=17)]
bg = load(path)
kdiff.solve(target, [bg[0].slice(0, 2000)], 5, backend="multicore")
config.STREAM_MEMORY_BASES = 0
config.STREAM_CHUNK_BASES = -(-sum(len(r) for r in bg) // 3)
calls = []
orig = cpu_lanes.lanes_parallel
def lp(alpha, m_end, rs, beta, *a):
    c0, w0 = time.process_time(), time.perf_counter()
    out = orig(alpha, m_end, rs, beta, *a)
    calls.append((int(a[2][3]) + 1, rs.shape[0], beta.shape[0], time.process_time() - c0, time.perf_counter() - w0))
    return out
cpu_lanes.lanes_parallel = lp
blocked = []
ob = driver.KernelCall._blocked_each
def be(self, alpha, starts, *a):
    c0 = time.process_time(); r = ob(self, alpha, starts, *a); blocked.append((starts.shape[0], time.process_time() - c0)); return r
driver.KernelCall._blocked_each = be
c0 = time.process_time(); w0 = time.perf_counter()
res = kdiff.solve(target, bg, 5, backend="multicore", threads=2)
cpu, wall = time.process_time() - c0, time.perf_counter() - w0
by = collections.defaultdict(lambda: [0, 0, 0, 0.0, 0.0])
for bits, lanes, cols, c, w in calls:
    key = (bits, lanes)
    e = by[key]; e[0] += 1; e[1] += cols; e[2] += lanes * cols; e[3] += c; e[4] += w
print(path[-8:], "cpu", round(cpu, 2), "wall", round(wall, 2), "Gcells", res.info.cells / 1e9)
for k in sorted(by): e = by[k]; print("  bits,lanes", k, "calls", e[0], "lane-cols(M)", round(e[2] / 1e6, 1), "cpu", round(e[3], 2), "ns/lane-col cpu", round(e[3] / e[2] * 1e9, 3), "wall", round(e[4], 2))
print("  blocked", len(blocked), sum(b[0] for b in blocked), round(sum(b[1] for b in blocked), 2))
