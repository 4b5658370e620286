"""Where end-to-end CUDA time goes (issue 16): cProfile of kmismatch T3x20 and edit.verify
R1000 from the family API (columns from the workload's arrays, or Records), beside their
kernel-only and CPU figures. Run on the GPU machine:
    python3 scripts/probe/e2e_profile.py kmismatch|kmismatch-upload|verify|verify-records [TOP]"""
import cProfile
import io
import os
import pstats
import sys
import time


def profile(fn, top):
    pr = cProfile.Profile()
    t0 = time.perf_counter()
    pr.enable()
    out = fn()
    pr.disable()
    wall = time.perf_counter() - t0
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats(os.environ.get("PROBE_SORT", "tottime")).print_stats(top)
    print(f"wall {wall:.3f} s")
    print(s.getvalue())
    return out


def kmismatch_case(top, upload=False):
    """The profiled solve finds the text on the GPU (engine.gpu.DEVICE_TEXTS), or with
    ``upload`` uploads it (the device copy dropped first)."""
    from benchmarks import kmismatch_cuda as b
    from engine import gpu, kmismatch

    text = [b._text("T3x20")]
    pats = b.patterns_from_lambda()
    opts = dict(variant="shared-mem", backend="cuda", strands=b.STRANDS)
    kmismatch.solve(pats, [text[0].slice(0, 5000)], b.K, **opts)
    kmismatch.solve(pats, text, b.K, **opts)
    if upload:
        gpu.DEVICE_TEXTS.clear()
    res = profile(lambda: kmismatch.solve(pats, text, b.K, **opts), top)
    print("solve seconds", res.info.seconds, "hits", len(res.hits), "GB/s", len(text[0]) / res.info.seconds / 1e9)
    print("kernel", b._kernel("T3x20", "shared-mem", 3))
    t0 = time.perf_counter()
    cpu = kmismatch.solve(pats, text, b.K, variant="pmasm", backend="multicore", strands=b.STRANDS)
    print("pmasm multicore", cpu.info.seconds, "wall", time.perf_counter() - t0)


def verify_case(top, form="columns"):
    """edit.verify R1000 on 200,000 pairs: ``columns`` from the workload's arrays (with the
    CPU on a sample, outside the profile), ``records`` from Records."""
    from benchmarks import edit_cuda as b
    from engine import edit

    b._family_run(1000, form)  # warm, and the row's figures
    print(b._family_run(1000, form))
    if form == "records":
        queries, regions, k = b._records(1000, range(b.FAMILY_PAIRS))
        inputs = lambda: (queries, regions, k)  # noqa: E731
    else:
        inputs = lambda: b._columns(1000, b.FAMILY_PAIRS)  # noqa: E731
    options = dict(variant="cooperative", backend="cuda", align=False)
    profile(lambda: edit.verify(*inputs(), **options), top)


if __name__ == "__main__":
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    cases = {"kmismatch": kmismatch_case,
             "kmismatch-upload": lambda top: kmismatch_case(top, upload=True),
             "verify": verify_case,
             "verify-records": lambda top: verify_case(top, "records")}
    cases[sys.argv[1]](top)
