"""Assembly gaps on a real GPU (issue #28): kdiff, kmismatch, edit search and pcr on the cuda
backend against a background with scaffold gaps and chromosome-end N runs give the CPU's
answers, whole on the device and streamed (``config.GPU_STREAM_BYTES`` at 1 MiB, so chunk
edges fall near gaps). The simulator covers the rule on tiny inputs (test_gaps_cuda.py); this
file checks the real kernels on real DNA.

Marked ``gpu`` and skipped where numba.cuda finds no GPU. On the lent GPU machine:
``python3 -m pytest tests/engine/test_gaps_cuda_gpu.py -m gpu -q --noconftest
-p tests.cuda_support -p no:cacheprovider``.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine import edit, kdiff, kmismatch
from engine.primers import pcr
from engine.sequences import Record, reverse_complement
from tests.cuda_support import GPU_ONLY, whole_and_streamed

pytestmark = GPU_ONLY

N = 15


@pytest.fixture(scope="module")
def background(lambda_record, ecoli_record):
    """E. coli with 10 kb of N at each end and 23 scaffold gaps of 100 N, a stretch of lambda
    with a gap inside the pcr amplicon below, and a record that is all gap."""
    rng = np.random.default_rng(28)
    ecoli = ecoli_record.codes.copy()
    for start in np.sort(rng.choice(len(ecoli) - 100, 23, replace=False)):
        ecoli[start:start + 100] = N
    ends = np.full(10_000, N, dtype=np.uint8)
    lam = lambda_record.codes[19_000:23_000].copy()
    lam[1_200:1_300] = N  # inside the amplicon of F (20,000) .. R (21,520)
    return [Record("ecoli_gapped", np.concatenate([ends, ecoli, ends])),
            Record("lam_gap", lam), Record("all_gap", np.full(500, N, dtype=np.uint8))]


@pytest.mark.parametrize("variant", ["bitparallel", "alternative"])
def test_kdiff(monkeypatch, lambda_record, background, variant):
    target = [lambda_record.slice(10_000, 10_400)]

    def key(r):
        return list(r.candidates)

    whole, streamed = whole_and_streamed(
        monkeypatch, lambda: kdiff.solve(target, background, 5, variant=variant, backend="cuda"),
        key)
    assert streamed == whole
    assert whole == key(kdiff.solve(target, background, 5, backend="multicore"))
    assert whole


@pytest.mark.parametrize("variant", ["pair-tile", "thread"])
def test_kmismatch(monkeypatch, lambda_record, background, variant):
    lam = lambda_record.codes
    patterns = [Record(f"p{s}", lam[s:s + 20].copy()) for s in range(20_150, 20_400, 10)]

    def key(r):
        return list(r.hits.tuples()), r.pattern_hits.tolist()

    whole, streamed = whole_and_streamed(
        monkeypatch, lambda: kmismatch.solve(patterns, background, 3, variant=variant,
                                             backend="cuda"), key)
    assert streamed == whole
    assert whole == key(kmismatch.solve(patterns, background, 3, backend="multicore"))
    assert whole[0]


@pytest.mark.parametrize("variant", ["task", "cooperative"])
def test_edit_search(monkeypatch, lambda_record, background, variant):
    lam = lambda_record.codes
    patterns = [Record(f"p{s}", lam[s:s + 20].copy()) for s in range(20_150, 20_400, 25)]

    def key(r):
        return [(h.pattern_id, h.record_id, h.strand, h.start, h.end, h.distance, h.cigar)
                for h in r.hits]

    def solve(backend, **options):
        return edit.solve(patterns, background, mode="search", k=3, report="hits",
                          strands="both", backend=backend, **options)

    whole, streamed = whole_and_streamed(monkeypatch, lambda: solve("cuda", variant=variant), key)
    assert streamed == whole
    assert whole == key(solve("multicore"))
    assert whole


def test_pcr_product_across_a_gap(monkeypatch, lambda_record, background):
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
    result = pcr.solve(primers, background, settings, backend="cuda")
    assert any(p.spans_gap for p in result.products)
