"""Streaming on a real GPU: kdiff, kmismatch, edit search and pcr on the cuda backend with
``config.GPU_STREAM_BYTES`` at 1 MiB (E. coli then comes in about ten chunks) give the answers
of the whole background on the device and of the CPU.

Marked ``gpu`` and skipped where numba.cuda finds no GPU. On the lent GPU machine:
``python3 -m pytest tests/engine/test_streaming_cuda_gpu.py -m gpu -q --noconftest
-p tests.cuda_support -p no:cacheprovider`` (as scripts/gpu runs the families' gpu tests).
"""

from __future__ import annotations

import pytest

from engine import edit, kdiff, kmismatch
from engine.primers import pcr
from engine.sequences import Record, reverse_complement
from tests.cuda_support import GPU_ONLY, whole_and_streamed

pytestmark = GPU_ONLY


@pytest.fixture(scope="module")
def background(lambda_record, ecoli_record):
    """E. coli, a stretch of lambda reversed and complemented, and a record shorter than
    any chunk."""
    lam = lambda_record.codes
    return [ecoli_record, Record("lam_rc", reverse_complement(lam[5000:30_000])),
            Record("tiny", lam[100:130].copy())]


@pytest.mark.parametrize("variant,flags", [("bitparallel", None), ("bitparallel", frozenset()),
                                           ("alternative", None)])
def test_kdiff(monkeypatch, lambda_record, background, variant, flags):
    target = [lambda_record.slice(10_000, 10_400)]

    def key(r):
        return list(r.candidates), {k: v.tolist() for k, v in r.profiles.items()}

    whole, streamed = whole_and_streamed(
        monkeypatch, lambda: kdiff.solve(target, background, 5, variant=variant, backend="cuda",
                                         flags=flags), key)
    assert streamed == whole
    assert whole == key(kdiff.solve(target, background, 5, backend="multicore"))


@pytest.mark.parametrize("variant", ["pair-tile", "thread"])
def test_kmismatch(monkeypatch, lambda_record, background, variant):
    patterns = [lambda_record.slice(s, s + 20) for s in range(6000, 26_000, 1000)]

    def key(r):
        return list(r.hits.tuples()), r.pattern_hits.tolist()

    whole, streamed = whole_and_streamed(
        monkeypatch, lambda: kmismatch.solve(patterns, background, 3, variant=variant,
                                             backend="cuda"), key)
    assert streamed == whole
    assert whole == key(kmismatch.solve(patterns, background, 3, backend="multicore"))
    assert whole[0]


@pytest.mark.parametrize("variant", ["task", "cooperative"])
@pytest.mark.parametrize("report", ["hits", "best"])
def test_edit_search(monkeypatch, lambda_record, background, variant, report):
    patterns = [lambda_record.slice(s, s + 20) for s in range(6000, 12_000, 1000)]

    def key(r):
        return ([(h.pattern_id, h.record_id, h.strand, h.start, h.end, h.distance, h.cigar)
                 for h in r.hits], [p.values.tolist() for p in r.profiles])

    def solve(backend, **options):
        return edit.solve(patterns, background, mode="search", k=3, report=report,
                          strands="both", backend=backend, **options)

    whole, streamed = whole_and_streamed(monkeypatch, lambda: solve("cuda", variant=variant), key)
    assert streamed == whole
    assert whole == key(solve("multicore"))
    assert whole[0]


def test_pcr(monkeypatch, lambda_record, background):
    lam = lambda_record.codes
    primers = [Record("F", lam[20_000:20_021].copy()),
               Record("R", reverse_complement(lam[21_500:21_520]))]
    settings = pcr.PcrSettings(max_edits=3, with_sequence=True)

    def key(r):
        return r.sites, r.products

    whole, streamed = whole_and_streamed(
        monkeypatch, lambda: pcr.solve(primers, background, settings, backend="cuda"), key)
    assert streamed == whole
    assert whole == key(pcr.solve(primers, background, settings, backend="multicore"))
    assert whole[1]
