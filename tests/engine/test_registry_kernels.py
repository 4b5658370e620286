"""Kernels named in each family's spec.py, and a backend bound once (engine.registry).

Every backend that runs kernels in this process names them; the name loads, and it is
what the family's jobs run: a job's answer through the named kernels equals the one
through another variant's.
"""

from __future__ import annotations

import pytest

from engine import registry
from engine.executors.dask import Dask
from engine.executors.inprocess import InProcess
from engine.jobs import Job

_NAMED = [(fam.name, v.name, b.name) for fam in registry.families() for v in fam.variants
          for b in v.backends if b.name != "dask"]


@pytest.mark.parametrize("family,variant,backend", _NAMED)
def test_every_local_backend_names_kernels_that_load(family, variant, backend):
    named = registry.family(family).variant(variant).backend(backend).kernels
    assert named.startswith(f"engine.{family}."), named
    if backend == "cuda":  # (the name only: importing numba.cuda is for cuda jobs)
        module, _, attr = named.partition(":")
        assert registry.has_module(f"engine.{family}", module.rpartition(".")[2])
        return
    loaded = registry.named_kernels(family, variant, backend)
    assert loaded is not None and loaded is registry.named_kernels(family, variant, backend)


def test_dask_names_no_kernels_of_its_own():
    for fam in registry.families():
        for v in fam.variants:
            spec = v.backend("dask")
            assert spec is None or spec.kernels == ""


def test_a_backend_is_bound_once_to_its_executor():
    job = Job("kmismatch", {}, variant="pmasm", backend="multicore", params={"k": 1})
    again = Job("kmismatch", {}, variant="pmasm", backend="multicore", params={"k": 3})
    assert registry.bind(job) is registry.bind(again)  # (k is no part of the binding)
    assert isinstance(registry.executor(job), InProcess) and not registry.executor(job).gpu
    assert registry.executor(job) is registry.executor(again)
    cuda = Job("kmismatch", {}, variant="thread", backend="cuda")
    assert registry.executor(cuda).gpu
    dask = Job("kmismatch", {}, variant="pmasm", backend="dask",
               params={"scheduler": "tcp://127.0.0.1:1"})
    assert isinstance(registry.executor(dask), Dask)
    assert registry.executor(dask).scheduler == "tcp://127.0.0.1:1"
    with pytest.raises(ValueError, match="names no kernels"):
        registry.kernels(dask)


def test_an_override_wins_for_its_context_only():
    job = Job("edit", {}, variant="myers", backend="serial")
    mine = object()
    token = registry.OVERRIDE.set(mine)
    try:
        assert registry.executor(job) is mine
    finally:
        registry.OVERRIDE.reset(token)
    assert isinstance(registry.executor(job), InProcess)


@pytest.mark.parametrize("variant", ["naive", "shift-add", "pmasm"])
def test_kmismatch_runs_the_kernels_its_spec_names(variant, monkeypatch):
    """The named module's scan is the one called (a renamed name reaches the job)."""
    from engine import kmismatch
    from engine.sequences import Record, encode

    text = Record("t", encode("ACGTTGCAACGTAGGCTAACGTACGT"))
    want = kmismatch.solve([Record("p", encode("ACGT"))], [text], 1, variant="pmasm",
                           backend="serial")
    module = registry.named_kernels("kmismatch", variant, "serial")
    calls = []
    original = module.scan_chunks_serial

    def counted(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(module, "scan_chunks_serial", counted)
    got = kmismatch.solve([Record("p", encode("ACGT"))], [text], 1, variant=variant,
                          backend="serial")
    assert calls
    assert got.hits.pos.tolist() == want.hits.pos.tolist()
    assert got.hits.mismatches.tolist() == want.hits.mismatches.tolist()
