"""GPU faults in the middle of a job, in numba's CUDA simulator (issue #14, "Also cover").

Run by test_gpu_faults.py in a subprocess with NUMBA_ENABLE_CUDASIM=1. The simulator has no
driver, so the driver's failures are stand-ins (tests/cuda_support.py's DriverError) raised
where engine.gpu talks to the driver, once some of the job's work is on the GPU:

- ``oom``: an allocation after the first one fails with CUDA_ERROR_OUT_OF_MEMORY;
- ``launch``: a kernel launch fails with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
- ``lost``: copying a kernel's results back (or waiting for it) fails with
  CUDA_ERROR_LAUNCH_FAILED, as when the device is lost (Xid, ECC) under a running kernel.

Each must end the job with one line (a CudaFailure; the CLI prints it and exits 1, writing
nothing), keep the partial results already reported, and leave the next job working.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("run with NUMBA_ENABLE_CUDASIM=1 (test_gpu_faults.py does)",
                allow_module_level=True)

from engine import cli, config, gpu, registry  # noqa: E402
from engine.jobs import CancelToken, drive  # noqa: E402
from engine.sequences import Record, encode, load  # noqa: E402
from tests.cuda_support import DriverError  # noqa: E402
from tests.engine.kdiff.cuda_support import tiny_kdiff_gpu  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

ERRORS = {
    "oom": ("[2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY", "ran out of memory"),
    "launch": ("[701] Call to cuLaunchKernel results in CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
               "CUDA error while launching"),
    "lost": ("[719] Call to cuCtxSynchronize results in CUDA_ERROR_LAUNCH_FAILED",
             "CUDA error while running"),
}


@pytest.fixture(autouse=True)
def small_gpu(monkeypatch):
    """kdiff's and kmismatch's blocks of a few threads, as in their simulator cases: the
    simulator runs every thread of a block in Python (their default 128-256 took most of
    this file's time), and the faults hit the same device operations."""
    tiny_kdiff_gpu(monkeypatch)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_THREADS_PER_BLOCK", 8)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_SHARED_MEM_THREADS_PER_BLOCK", 8)
    monkeypatch.setattr(config, "KMISMATCH_CUDA_ORDER_THREADS", 4)
#: Device operations each fault hits, and what engine.gpu says it was doing.
ALLOCATIONS = {"upload": lambda a: a[1], "empty": lambda a: a[2], "upload_many": lambda a: a[0],
               "spare": lambda a: a[2]}
LAUNCHES = {"launch": lambda a: f"launching {a[1]} blocks of {a[2]} threads"}
RESULTS = {"fetch": lambda a: "running a kernel (copying its results back)",
           "synchronize": lambda a: a[0] if a else "running a kernel"}


class Faults:
    """Makes the GPU fail with ``kind`` once armed, after ``spare`` more operations of that kind."""

    def __init__(self, monkeypatch, kind: str):
        self.kind, self.armed, self.spare, self.hit = kind, False, 0, 0
        ops = {"oom": ALLOCATIONS, "launch": LAUNCHES, "lost": RESULTS}[kind]
        for name, what in ops.items():
            monkeypatch.setattr(gpu.Device, name, self._failing(getattr(gpu.Device, name), what))

    def arm(self, spare: int = 0) -> None:
        self.armed, self.spare = True, spare

    def _failing(self, original, what):
        def op(dev, *args, **kwargs):
            if self.armed:
                if self.spare <= 0:
                    self.hit += 1
                    with gpu.cuda_errors(what(args)):
                        raise DriverError(ERRORS[self.kind][0])
                self.spare -= 1
            return original(dev, *args, **kwargs)
        return op


def _seq(rng, n):
    return "".join(rng.choice(list("ACGT"), n))


def jobs(backend: str) -> dict:
    rng = np.random.default_rng(14)
    a, b = load(_seq(rng, 48)), load(_seq(rng, 120))
    return {
        "kdiff": lambda: registry.family_api("kdiff").make_job(
            load(_seq(rng, 16)), load(_seq(rng, 40)), k=3, backend=backend),
        "kmismatch": lambda: registry.family_api("kmismatch").make_job(
            load(_seq(rng, 6)), load(_seq(rng, 300)), k=1, backend=backend),  # patterns, text
        "lcs": lambda: registry.family_api("lcs").make_job(a[0], b[0], task="length",
                                                           backend=backend),
        "nw": lambda: registry.family_api("nw").make_job(a, b, backend=backend),
        "edit": lambda: registry.family_api("edit").make_job(
            load(_seq(rng, 10)), load(_seq(rng, 300)), mode="search", k=2, backend=backend,
            **({"variant": "task"} if backend == "cuda" else {})),
    }


def answer(family: str, result):
    """What a job found, comparable across backends."""
    if family == "kdiff":
        return [(c.target_id, c.start, c.end) for c in result.candidates]
    if family == "kmismatch":
        return [(h.record_id, h.start, h.strand, h.mismatches) for h in result.hits]
    if family == "lcs":
        return result.length
    if family == "nw":
        return result.score
    return [(h.pattern_id, h.record_id, h.strand, h.end, h.distance) for h in result.hits]


def run(job, on_progress=None):
    return drive(registry.family_api(job.family).iter_solve(job, CancelToken()), on_progress)


@pytest.mark.parametrize("kind", sorted(ERRORS))
@pytest.mark.parametrize("family", ["kdiff", "kmismatch", "lcs", "nw", "edit"])
def test_a_fault_mid_job_is_one_line_and_the_next_job_works(monkeypatch, family, kind):
    expected = answer(family, run(jobs("serial")[family]()))
    job = jobs("cuda")[family]()
    run(job)  # compiled, so that the fault hits the job's work, not the warm-up
    with monkeypatch.context() as mp:
        faults = Faults(mp, kind)
        faults.arm(spare=1 if kind == "oom" else 0)  # oom: the job's first allocation works
        with pytest.raises(gpu.CudaFailure) as err:
            run(job)
        assert faults.hit == 1
    message = str(err.value)
    assert ERRORS[kind][1] in message and "\n" not in message
    assert answer(family, run(jobs("cuda")[family]())) == expected  # the next job works


def test_partial_results_reported_before_a_fault_are_kept(monkeypatch):
    """kdiff reports the candidates found so far after every slice (as on the CPU); a fault
    in a later slice leaves them as they were, and every one is in the full answer."""
    rng = np.random.default_rng(5)
    # A slice stays within one target record: three records, three slices at least.
    target = [Record(f"t{i}", encode(_seq(rng, 30))) for i in range(3)]
    background = load(_seq(rng, 60))
    make = registry.family_api("kdiff").make_job
    full = answer("kdiff", run(make(target, background, k=3, backend="serial")))
    reported = []
    with monkeypatch.context() as mp:
        faults = Faults(mp, "lost")

        def on_progress(p):
            if p.phase == "running":
                reported.append(p.partial)
                faults.arm()  # the next slice's results are lost

        with pytest.raises(gpu.CudaFailure):
            run(make(target, background, k=3, backend="cuda"), on_progress)
    last = [(c.target_id, c.start, c.end) for c in reported[-1]]
    assert reported and last and set(last) <= set(full)


def test_cli_gpu_fault_is_one_line_exit_1_and_no_output(monkeypatch, capsys, tmp_path):
    out = tmp_path / "out.csv"
    argv = ["kdiff", "ACGTTGCAAGGTACCAGT", "TTGCAAGCCGTACG", "-k", "3", "--backend", "cuda",
            "-o", str(out)]
    assert cli.main(argv) == 0
    good = out.read_text()
    out.unlink()
    for kind in sorted(ERRORS):
        with monkeypatch.context() as mp:
            Faults(mp, kind).arm(spare=1 if kind == "oom" else 0)
            capsys.readouterr()
            assert cli.main(argv) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("primerscope: run failed: CudaFailure: ")
        assert ERRORS[kind][1] in err[0]
        assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert cli.main(argv) == 0 and out.read_text() == good
