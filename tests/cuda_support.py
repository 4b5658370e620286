"""What every family's CUDA tests share (no hypothesis, no conftest: the GPU machine runs the
gpu-marked files with --noconftest).

Three kinds of CUDA test live in each family's test folder:
- ``test_<family>_cuda.py`` runs in the normal test process: registry entries, options, that the
  CPU paths never load numba.cuda, the CLI without a GPU, and ``cuda_sim_cases.py`` run in a
  subprocess under numba's CUDA simulator (:func:`run_simulator_cases`; the simulator must be
  switched on before numba is first imported, hence the subprocess);
- ``cuda_sim_cases.py``, the kernels against the family's oracle on small inputs;
- ``test_<family>_cuda_gpu.py``, marked ``gpu`` (:data:`GPU_ONLY`), the kernels against the CPU
  solvers on real DNA, run on the lent GPU machine by ``scripts/gpu tests FAMILY``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def gpu_present() -> bool:
    """A real CUDA GPU (the simulator does not count: the gpu tests are far too big for it)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return False
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


#: ``pytestmark`` of a gpu test file: marked gpu, skipped without a GPU, and the registry asked
#: afresh whether there is one.
GPU_ONLY = [pytest.mark.gpu, pytest.mark.skipif(not gpu_present(), reason="no CUDA GPU"),
            pytest.mark.usefixtures("registry_sees_the_gpu")]


def _native_env() -> dict:
    return {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}


def numba_cuda_modules_loaded_by(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter without the simulator and return the numba.cuda
    modules it ended up loading (a CPU path and application start-up must load none)."""
    code += "\nimport sys\nprint(sorted(m for m in sys.modules if m.startswith('numba.cuda')))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=300, env=_native_env())
    assert out.returncode == 0, out.stderr
    return eval(out.stdout.strip().splitlines()[-1])  # a printed list of names


def _loaded_profile() -> str:
    """The hypothesis profile this run loaded (tests/conftest.py's "ci" or "thorough", e.g.
    from --hypothesis-profile), for a child process to load too (its conftest reads
    HYPOTHESIS_PROFILE). Imported here: the GPU machine's runs have no hypothesis."""
    from hypothesis import settings

    return next((name for name in ("thorough", "ci")
                 if settings.get_profile(name).max_examples == settings.default.max_examples),
                "ci")


def run_simulator_cases(cases_file: Path, selection: str) -> None:
    """Run the ``-k selection`` part of a family's cuda_sim_cases.py under the simulator, in a
    subprocess in this run's hypothesis profile, and fail with its last lines unless it passed
    and skipped nothing."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", HYPOTHESIS_PROFILE=_loaded_profile())
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", str(cases_file), "-q", "-n", "0",
                           "-p", "no:cacheprovider", "-x", "-k", selection],
                          capture_output=True, text=True, cwd=ROOT, timeout=900, env=env)
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:])
    assert proc.returncode == 0, tail
    assert " passed" in tail and "skipped" not in tail.splitlines()[-1], tail


class _Barrier:
    """One simulated block's syncthreads: the live threads, those waiting, and a closed gate
    that each release (or an abort) opens, leaving a new closed one for the next round."""

    def __init__(self, threads):
        self.lock = threading.Lock()
        self.threads, self.live, self.arrived, self.gate = threads, len(threads), 0, _closed()
        self.failed = None  # the first thread that raised

    def release(self):
        """(Under ``lock``.) The waiting threads go through the gate one after the other,
        each opening it for the next: one of them runnable at a time, not all at once."""
        self.arrived = 0
        gate, self.gate = self.gate, _closed()
        gate.release()


def _closed():
    gate = threading.Lock()
    gate.acquire()
    return gate


def quicker_simulator() -> None:
    """numba's CUDA simulator frees a block's threads from syncthreads by a loop that polls
    every thread until all live ones wait (and, under the cases' tiny GIL switch interval,
    takes about half the run); here the last live thread to arrive or exit frees them through
    a gate (:class:`_Barrier`). The same barrier: it waits for every live thread of the block, a
    thread that raised aborts the others, and its exception is the launch's. Kept as numba
    has it where its simulator's classes are not the ones this replaces."""
    from numba.cuda.simulator import kernel as sim

    thread_cls, manager_cls = sim.BlockThread, sim.BlockManager
    if not all(hasattr(thread_cls, a) for a in ("run", "syncthreads", "syncthreads_count")) or \
            not hasattr(manager_cls, "run") or getattr(manager_cls, "_quicker", False):
        return
    thread_run = thread_cls.run

    def syncthreads(self):
        if self.abort:
            raise RuntimeError("abort flag set on syncthreads call")
        block = self._manager.barrier
        with block.lock:
            block.arrived += 1
            gate = None if block.arrived == block.live else block.gate
            if gate is None:
                block.release()
        if gate is not None:
            gate.acquire()
            gate.release()  # for the next thread waiting at this gate
        if self.abort:
            raise RuntimeError("abort flag set on syncthreads clear")

    def run_thread(self):
        try:
            thread_run(self)
        finally:
            block = self._manager.barrier
            with block.lock:
                block.live -= 1
                if self.exception and block.failed is None:
                    block.failed = self
                    for other in block.threads:
                        other.abort = True
                    block.release()
                elif block.arrived and block.arrived == block.live:
                    block.release()

    def run_block(self, grid_point, *args):
        def target():
            self._f(*args)

        threads = [thread_cls(target, self, grid_point, block_point, self._debug)
                   for block_point in np.ndindex(*self._block_dim)]
        self.barrier = _Barrier(threads)
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        failed = self.barrier.failed
        if failed is not None:
            raise failed.exception[0].with_traceback(failed.exception[1])

    thread_cls.syncthreads, thread_cls.run = syncthreads, run_thread
    manager_cls.run, manager_cls._quicker = run_block, True
    _quicker_device_calls(sim)
    _quicker_kernel_arrays()
    _quicker_casts()


def _quicker_device_calls(sim) -> None:
    """At every device-function call numba's simulator scans the function's module globals
    for the ``cuda`` module, to swap in the launch's fake one for the call (a dict built from
    a few hundred globals, per call, in the kernels' inner loops). Here the names that can
    hold it are found once per module; the same swap then runs on those names alone."""
    from numba import cuda

    kernel_cls = sim.FakeCUDAKernel
    if not hasattr(sim, "_get_kernel_context") or not hasattr(sim, "FakeCUDAModule"):
        return
    launch, fake_cls = kernel_cls.__call__, sim.FakeCUDAModule
    names: dict = {}  # id(module globals) -> the names that hold the real or a fake cuda

    def call(self, *args):
        if not self._device:
            return launch(self, *args)
        fn_globs = self.fn.__globals__
        held = names.get(id(fn_globs))
        if held is None:
            held = names[id(fn_globs)] = tuple(
                k for k, v in fn_globs.items() if v is cuda or isinstance(v, fake_cls))
        real = [k for k in held if fn_globs[k] is cuda]
        if not real:
            return self.fn(*args)
        fake = sim._get_kernel_context()
        fn_globs.update(dict.fromkeys(real, fake))
        try:
            return self.fn(*args)
        finally:
            fn_globs.update(dict.fromkeys(real, cuda))

    kernel_cls.__call__ = call


def _quicker_kernel_arrays() -> None:
    """An array element read or written in a simulated kernel passes three wrappers, and an
    attribute (``a.shape``) lists ``dir()`` of the numpy array each time; here an element
    goes to the numpy array directly (a sub-array wrapped as before) and ``dir(ndarray)`` is
    listed once."""
    from numba.cuda.simulator.cudadrv import devicearray

    inner, outer = devicearray.FakeCUDAArray, devicearray.FakeWithinKernelCUDAArray
    if not all(hasattr(outer, a) for a in ("__getitem__", "__setitem__", "__getattr__")):
        return
    attribute, ndarray, void = outer.__getattr__, np.ndarray, np.void
    listed = frozenset(dir(np.empty(0)))

    def getitem(self, idx):
        wrapped = self.__dict__["_item"]
        ret = wrapped._ary[idx]
        if type(ret) is ndarray or type(ret) is void:
            return outer(inner(ret, stream=wrapped.stream))
        return ret

    def setitem(self, idx, val):
        self.__dict__["_item"]._ary[idx] = val

    def getattr_(self, name):
        if type(self.__dict__["_item"]._ary) is ndarray and name in listed:
            return getattr(self.__dict__["_item"]._ary, name)  # not a FakeCUDAArray: plain
        return attribute(self, name)

    outer.__getitem__, outer.__setitem__, outer.__getattr__ = getitem, setitem, getattr_


def _quicker_casts() -> None:
    """A cast in a kernel (``int32(x)``, ``U(i)``) calls the numba type, which imports numba's
    typing module (through every import hook of the process: PySide6's, once pytest-qt has
    loaded it) and tests the argument against an abstract class at every call, a third of a
    simulated kernel's time; here a plain number goes to the type's cast at once (the same
    ``cast_python_value`` numba calls)."""
    from numba.core.types.abstract import Type

    call = Type.__call__
    if getattr(call, "_quicker", False):
        return
    plain = (int, float, bool, np.integer, np.floating, np.bool_)

    def cast(self, *args):
        if len(args) == 1 and isinstance(args[0], plain):
            return self.cast_python_value(args[0])
        return call(self, *args)

    cast._quicker = True
    Type.__call__ = cast


if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    quicker_simulator()
    # A thread waiting at a barrier above sleeps on its gate and hands the GIL
    # on at once: a forced switch every 1 us (set for numba's polling barrier) now only costs
    # thread switches (a third of a case's CPU time). 1 ms still interleaves the threads.
    sys.setswitchinterval(1e-3)


def simulator_cli(*args: str) -> subprocess.CompletedProcess:
    """``python -m engine.cli ARGS`` under the simulator, with :func:`quicker_simulator`'s
    patches: the module runs as ``__main__`` as -m runs it (runpy), after this module is
    imported (a plain -m run would keep numba's polling barrier and slow casts)."""
    code = ("import runpy, tests.cuda_support\n"
            "runpy.run_module('engine.cli', run_name='__main__', alter_sys=True)\n")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env=dict(os.environ, NUMBA_ENABLE_CUDASIM="1"))


def check_cli_without_a_gpu(args: list[str], out: Path) -> None:
    """``primerscope ARGS --backend cuda -o OUT`` on a machine without a GPU: exit 2, one line
    that says so, no traceback, no output file."""
    proc = subprocess.run([sys.executable, "-m", "engine.cli", *args, "--backend", "cuda",
                           "-o", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env=_native_env())
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "the cuda backend is not available" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


# -- fixtures (a pytest plugin: tests/conftest.py loads it, and scripts/gpu with -p) -------------
@pytest.fixture(scope="module")
def registry_sees_the_gpu():
    from engine import registry

    registry.backend_status.cache_clear()  # another test may have cached a patched answer
    yield


@pytest.fixture(scope="module")
def lambda_record():
    from benchmarks.data import lambda_phage

    return lambda_phage()


@pytest.fixture(scope="module")
def ecoli_record():
    from benchmarks.data import ecoli

    return ecoli()


def whole_and_streamed(monkeypatch, solve, key):
    """``key`` of ``solve()`` with the background whole on the GPU, and streamed in 1 MiB
    chunks (``config.GPU_STREAM_BYTES``): the pair a streaming test compares."""
    from engine import config

    whole = key(solve())
    with monkeypatch.context() as mp:
        mp.setattr(config, "GPU_STREAM_BYTES", 1 << 20)
        streamed = key(solve())
    return whole, streamed


# -- failures the simulator cannot produce (no driver), for the one-line error checks ---------
class DriverError(Exception):
    """Stands in for numba's CudaAPIError (the simulator has no driver)."""


@contextmanager
def no_gpu_memory(monkeypatch):
    """Inside, every device allocation fails as the driver does when the GPU is full (and no
    memory a finished job left is spare: engine.gpu.SPARES)."""
    from engine import gpu

    def no_memory(*args, **kwargs):
        raise DriverError("[2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY")

    gpu.SPARES.clear()
    with monkeypatch.context() as mp:
        mp.setattr(gpu.cuda, "device_array", no_memory)
        mp.setattr(gpu.cuda, "to_device", no_memory)
        yield


@contextmanager
def launches_refused(monkeypatch):
    """Inside, every kernel launch fails as the driver does when a block asks too much."""
    from engine import gpu

    def refused(self, kernel, blocks, tpb, shared_bytes, *args, **kwargs):
        with gpu.cuda_errors(f"launching {blocks} blocks of {tpb} threads"):
            raise DriverError("[701] Call to cuLaunchKernel results in\n"
                              "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")

    with monkeypatch.context() as mp:
        mp.setattr(gpu.Device, "launch", refused)
        yield
