"""Summarise an nsys SQLite export: where the GPU was busy and where it waited.

    python3 scripts/probe/nsys_timeline.py PROFILE.sqlite [GAPS]

Prints the span from the first CUDA API call to the last GPU activity, the kernel and
copy time in it (per kernel name: launches, total), the GPU's idle time, and the GAPS
(default 12) longest idle stretches with what ran before and after each.
"""
import sqlite3
import sys
from collections import defaultdict


def main(path: str, top: int = 12) -> None:
    db = sqlite3.connect(path)
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    acts = [(s, e, names.get(n, "?").split("(")[0][-40:]) for s, e, n in
            db.execute("SELECT start, end, shortName FROM CUPTI_ACTIVITY_KIND_KERNEL")]
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
        kinds = {1: "HtoD", 2: "DtoH", 8: "DtoD"}
        acts += [(s, e, f"memcpy {kinds.get(k, k)} {b}B") for s, e, k, b in
                 db.execute("SELECT start, end, copyKind, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY")]
    if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
        acts += [(s, e, "memset") for s, e in db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET")]
    api0 = db.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0] \
        if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables else None
    acts.sort()
    if not acts:
        sys.exit("no GPU activity")
    t0 = min(api0 or acts[0][0], acts[0][0])
    t1 = max(e for _, e, _ in acts)
    per = defaultdict(lambda: [0, 0])
    busy, gaps, end, last = 0, [], acts[0][0], "(start)"
    for s, e, name in acts:
        key = name if not name.startswith("memcpy") else name.split()[0] + " " + name.split()[1]
        per[key][0] += 1
        per[key][1] += e - s
        if s > end:
            gaps.append((s - end, last, name))
        busy += max(0, e - max(s, end))
        if e > end:
            end, last = e, name
    span = t1 - t0
    print(f"span {span / 1e6:.2f} ms (first API call to last GPU activity); GPU busy "
          f"{busy / 1e6:.2f} ms; idle from the first activity {(t1 - acts[0][0] - busy) / 1e6:.2f} ms; "
          f"before it {(acts[0][0] - t0) / 1e6:.2f} ms")
    for key, (n, total) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        print(f"  {key:44s} {n:6d} x  {total / 1e6:9.3f} ms")
    print(f"gaps: {len(gaps)}, {sum(g for g, _, _ in gaps) / 1e6:.2f} ms; longest:")
    for g, before, after in sorted(gaps, reverse=True)[:top]:
        print(f"  {g / 1e6:8.3f} ms  after {before}  before {after}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 12)
