"""The ``dask`` backend's cluster side: a client, what workers keep, a job's chunk plan.

A family runs a job on a Dask cluster as the task grid of :mod:`engine.streaming`:
(range of target starts, or none) x (background chunk), each task small to ship:

- the job's data (targets, patterns, an in-memory background) is scattered to every
  worker once (broadcast, engine/executors/dask.py), so a task carries only indices and the
  :class:`~engine.streaming.Chunk` it reads;
- a genome store's records travel as (path, checksum): a worker opens the store by its
  path (a shared file system) and keeps it open for later tasks (``engine.store``
  pickles stores that way);
- a task's answer is a partial one (kdiff: c(r) maxima; searches: the hits a chunk
  owns), merged by the family's problem as tasks complete, in whatever order
  (engine/executors/dask.py). Progress and cancel go through
  :func:`engine.slices.run_slices` as for any backend: the executor waits at most
  ``config.SLICE_SECONDS`` for results in each step.

**Where.** No address: a ``LocalCluster`` of single-threaded worker processes, one per
core; with a CUDA GPU and ``dask_cuda`` installed, a ``LocalCUDACluster`` (one worker
per GPU). ``--scheduler tcp://HOST:PORT``: that cluster (its workers need primerscope
and the store's path). Tasks run the family's CUDA kernels where every worker sees a
GPU, else its multicore kernels with one numba thread per task (Dask's worker threads
are the parallelism; the kernels release the GIL).

**Failures.** A worker that dies is Dask's to handle: its tasks run again elsewhere
(the local cluster allows ``config.CLUSTER_ALLOWED_FAILURES`` deaths per task), so the
answer is the same. A task that raises fails the job with that error. **Cancel**
cancels every future; an owned local cluster is closed (its processes end), and on an
outside cluster running tasks end on their own (tasks last about
``config.CLUSTER_TASK_SECONDS``). Results merged before the cancel are kept.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections import OrderedDict
from typing import Any, Callable

from engine import config, registry, scheduler_address, spawning


def worker_selection(spec, variant: str, flags, gpu: bool) -> tuple[str, str, str | None, frozenset]:
    """(variant, backend, parallel form, flags) a worker runs: the job's variant on the
    workers' backend (cuda on GPU workers, else multicore) with the job's flags, or that
    backend's default variant and flags where the variant has no such backend."""
    backend = "cuda" if gpu else "multicore"
    if spec.variant(variant).backend(backend) is None:
        variant = spec.default_variants[backend]
    bspec = spec.variant(variant).backend(backend)
    chosen = (frozenset(flags) & set(bspec.flags) if registry.threaded(backend)
              else frozenset(bspec.default_flags))
    return variant, backend, (bspec.parallel[0] if bspec.parallel else None), chosen


def worker_job(spec, job, gpu: bool):
    """The job as a worker runs it: :func:`worker_selection`'s variant, backend and flags,
    one numba thread per task, no scheduler address."""
    import dataclasses

    variant, backend, parallel, flags = worker_selection(spec, job.variant, job.flags, gpu)
    params = {k: v for k, v in job.params.items() if k != "scheduler"}
    return dataclasses.replace(job, variant=variant, backend=backend, parallel=parallel,
                               flags=flags, params=params, threads=1)


# ---------------------------------------------------------------------------- the client

def local_cores() -> int:
    """The cores this process may run on (taskset and cgroup cpusets count): a local
    cluster's worker count."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) < 200 else text[:197] + "..."


def _gpu_workers_locally() -> bool:
    """A CUDA GPU here and dask_cuda installed (then the local cluster is a LocalCUDACluster)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or not registry.backend_status("cuda")[0]:
        return False
    return importlib.util.find_spec("dask_cuda") is not None


def worker_has_gpu() -> bool:
    """On a worker: whether numba sees a real CUDA GPU."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return False
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001 -- no driver, no toolkit: a CPU worker
        return False


def dask_setup(worker) -> None:
    """A local cluster's worker process, at its start (Dask's preload hook): ignore SIGINT.
    Ctrl-C reaches the whole process group; the run cancels and closes the cluster itself
    (engine.interrupts), so its workers must not die first with a traceback each."""
    import signal

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


class Session:
    """A client of a cluster: a new local one (closed with the session) or the one at
    ``scheduler``. ``gpu``: every worker runs the CUDA kernels; ``threads``: worker threads."""

    def __init__(self, scheduler: str | None = None):
        ok, reason = registry.backend_status("dask")
        if not ok:
            raise ValueError(f"the dask backend is not available: {reason}")
        import dask
        from distributed import Client

        logging.getLogger("distributed").setLevel(logging.ERROR)  # no worker chatter on stderr
        self.cluster = None
        if scheduler:
            self.client = scheduler_address.connect(scheduler)  # (checked, probed, in time)
            try:
                self.client.wait_for_workers(1, timeout=config.CLUSTER_CONNECT_SECONDS)
            except (OSError, TimeoutError):
                self.client.close()
                raise ValueError(f"the Dask scheduler at {scheduler} has no workers") from None
            self.gpu = all(self.client.run(worker_has_gpu).values())
        else:
            self.gpu = _gpu_workers_locally()
            # (main_left_out: the workers are spawned; a script without a __main__ guard
            # must not run again in each of them)
            with dask.config.set({"distributed.scheduler.allowed-failures":
                                  config.CLUSTER_ALLOWED_FAILURES}), spawning.main_left_out():
                if self.gpu:
                    from dask_cuda import LocalCUDACluster

                    self.cluster = LocalCUDACluster(dashboard_address=":0", preload=[__name__],
                                                    silence_logs=logging.ERROR)
                else:
                    from distributed import LocalCluster

                    self.cluster = LocalCluster(n_workers=local_cores(),
                                                threads_per_worker=1, processes=True,
                                                dashboard_address=":0", preload=[__name__],
                                                silence_logs=logging.ERROR)
            self.client = Client(self.cluster, set_as_default=False)
        nthreads = self.client.nthreads()  # worker address -> its threads
        self.threads = sum(nthreads.values()) or 1
        self.workers = tuple(nthreads)

    def close(self) -> None:
        """Close the client, and the local cluster if this session started it."""
        try:
            self.client.close(timeout=config.CLUSTER_CONNECT_SECONDS)
        finally:
            if self.cluster is not None:
                self.cluster.close(timeout=config.CLUSTER_CONNECT_SECONDS)


# ---------------------------------------------------------------------------- on a worker

_CACHE: OrderedDict = OrderedDict()
_CACHE_LOCK = threading.Lock()


def worker_state(shared, build: Callable[[Any], Any]):
    """On a worker: ``build(shared)``, made once per job (``shared.token``) and process, kept
    for the job's later tasks (the last two jobs' are kept)."""
    with _CACHE_LOCK:
        state = _CACHE.get(shared.token)
        if state is None:
            state = _CACHE[shared.token] = build(shared)
            while len(_CACHE) > 2:
                _CACHE.popitem(last=False)
        _CACHE.move_to_end(shared.token)
        return state


def per_thread(state, build: Callable[[], Any]):
    """On a worker: ``build()`` once per thread of ``state`` (a worker with several threads
    runs tasks side by side; a kernel call and its chunk buffer are one thread's)."""
    local = state.__dict__.setdefault("_local", threading.local())
    if not hasattr(local, "value"):
        local.value = build()
    return local.value


def task_threads(backend: str) -> None:
    """On a worker, before a kernel call: one numba thread per task (see the module doc)."""
    if registry.threaded(backend):
        import numba

        numba.set_num_threads(1)


# ---------------------------------------------------------------------------- tasks

def task_chunks(records, strands: str, overlap: int, gap_reach: int | None = None,
                gpu: bool = False) -> list:
    """The chunk plan of a job's background (engine.streaming) that its tasks take: a CPU
    worker's chunks at most config.CLUSTER_CHUNK_BASES a strand (tasks short enough to
    spread over the workers and to stop soon on cancel); GPU workers' those a cuda job
    streams (config.GPU_STREAM_BYTES of text), as in one process. (STREAM_CHUNK_BASES
    there cut a 3.1 Gb kdiff into 4x the chunks, each a launch too small to fill the
    GPU: 0.68x the plain cuda run.)"""
    from engine.streaming import Background

    bases = None if gpu else min(config.STREAM_CHUNK_BASES, config.CLUSTER_CHUNK_BASES)
    return Background(records, strands, gpu=gpu).chunks(overlap, bases, gap_reach)


def task_result(future):
    """A completed task's result. A task's error is raised here; a task whose workers kept
    dying, or that the cluster forgot, raises RuntimeError."""
    from concurrent.futures import CancelledError

    from distributed.scheduler import KilledWorker

    try:
        return future.result()
    except CancelledError:  # (distributed's FutureCancelledError: the cluster forgot it)
        raise RuntimeError("the Dask cluster dropped a task: its workers are gone or the "
                           "scheduler restarted") from None
    except KilledWorker as exc:
        raise RuntimeError(f"a Dask task failed: its workers died "
                           f"{config.CLUSTER_ALLOWED_FAILURES + 1} times ({_one_line(exc)})"
                           ) from None
