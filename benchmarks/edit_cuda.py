"""edit benchmark cases of the cuda backend (``primerscope bench edit --backend cuda``).

R100, R200, R400, R1000: the seed study's read verification (Chacon et al.). READS reads of
m bases sampled from E. coli with about 5% edits (substitutions, insertions and deletions in
equal shares), each paired with CANDIDATES candidate regions of m + m/5 bases of E. coli, one of
them the read's true origin (the read in its middle) and the others random: 1,000,000
(read, region) pairs per m. Each pair gets its best distance within k = m/5 (the study's
error rate 0.2) and the first end with it. Cells = m x region length per pair, as in the study.

Rows, per m:

- ``task/cuda`` and ``cooperative/cuda w=W`` (W words per thread; ``c=C``: C columns per
  pipeline step instead of the default): ``seconds`` is the kernels' time (CUDA events: the
  match tables and the distance kernel), ``TCUPS`` cells per second over it; ``e2e_s`` and
  ``TCUPS_e2e`` are end to end from host arrays (genome and reads in, distances out:
  packing, copies, kernels). Regions are ranges of the genome, never copied, as in a mapper.
- ``cooperative/cuda verify() columns``: the family API end to end on the first FAMILY_PAIRS
  pairs, from the workload's arrays to columnar hits (edit.verify with backend="cuda", no
  alignments): the queries and regions as engine.sequences.SeqColumns (regions as ranges of
  the genome, each read stored once and read by range for its candidates), the plan, the
  slices and the hit table (EditHits: hits.record, hits.end, hits.distance; no row objects).
  ``TCUPS_e2e`` is over that wall time (goal GOAL_E2E_TCUPS). In the same run the CPU
  (multicore myers-blocked, the same columnar API) verifies FAMILY_CPU_PAIRS of those pairs
  (a seeded sample): ``cpu_TCUPS`` and ``vs_cpu`` = TCUPS_e2e / cpu_TCUPS (goal GOAL_VS_CPU).
- ``cooperative/cuda verify() flat columns``: the same pairs with the queries and the
  regions copied into one buffer each with offsets (SeqColumns.from_offsets, built before the
  clock starts): what the flat form costs (its buffers travel whole).
- ``cooperative/cuda verify() from Records``: the same pairs as a Record per query and per
  region (made before the clock starts): the Records adapter (SeqColumns.from_records) on top.
- ``cpu check (peer)``: edit.verify on the CPU (multicore myers-blocked, columns) for a sample
  of pairs, compared with the GPU's distances and ends; its cells per second for scale.

Every CUDA row names the device and says whether its distances and ends equal the first
GPU row's (``agrees``).
"""

from __future__ import annotations

import os
import time
from functools import lru_cache

import numpy as np

from engine import config, edit
from benchmarks import Case, Ratio, data
from engine.columns import Ids
from engine.sequences import Record, SeqColumns

READ_LENGTHS = (100, 200, 400, 1000)
READS = 50_000
CANDIDATES = 20
EDIT_RATE = 0.05
CPU_SAMPLE = 2_000
#: Pairs (the first reads' candidates) that the family-API rows run.
FAMILY_PAIRS = 200_000
#: Of those, the pairs the CPU verifies in the same run (a seeded sample).
FAMILY_CPU_PAIRS = 2_000
#: Timed calls of the family-API rows after the warm-up (``seconds``: the best; ``first_s``: the
#: first, which also allocates the pools' page-locked and device blocks).
FAMILY_RUNS = 3
WORDS = (1, 2, 4)
GOAL_TCUPS = 10.0  # cooperative, m >= 400, on an H100 (issue 5)
GOAL_E2E_TCUPS = 5.0  # the family API end to end from arrays, R1000 (issue 16)
GOAL_VS_CPU = 20.0  # ... against the multicore CPU on the same pairs (issue 16)

RATIOS = tuple(
    Ratio(f"R{m}", f"cooperative/cuda w={config.EDIT_CUDA_WORDS_PER_THREAD}", "task/cuda", None,
          f"cooperative (w={config.EDIT_CUDA_WORDS_PER_THREAD}) vs task, kernels, m={m}")
    for m in READ_LENGTHS) + tuple(
    Ratio(f"R{m}", f"cooperative/cuda w={config.EDIT_CUDA_WORDS_PER_THREAD}", "cpu check (peer)",
          None, f"cooperative vs multicore CPU (per cell), m={m}") for m in READ_LENGTHS)

_ACGT = np.array([1, 2, 4, 8], dtype=np.uint8)
_BASE = np.zeros(16, dtype=np.uint8)
_BASE[_ACGT] = np.arange(4)  # E. coli is plain ACGT
_reference: dict = {}  # m -> (best, end) of the first GPU row


@lru_cache(maxsize=None)
def workload(m: int):
    """(genome, region starts, region ends, reads flat, read offsets, read of each pair, k,
    slot of the true region per read), generated with numpy, seeded by m.

    Each read is m + m/5 source symbols with edits at 5% of them (a third each substitution,
    insertion before, deletion), cut to m. Edits are applied to all reads at once with
    np.insert / np.delete on the flat sources.
    """
    rng = np.random.default_rng(1000 + m)
    genome = data.ecoli().codes
    size = len(genome)
    width = m + m // 5
    origin = rng.integers(width, size - 2 * width, READS)
    flat = np.lib.stride_tricks.sliding_window_view(genome, width)[origin].ravel()
    at = np.flatnonzero(rng.random(flat.shape[0], dtype=np.float32) < EDIT_RATE)
    op = rng.integers(0, 3, at.shape[0])
    sub, ins, dele = at[op == 0], at[op == 1], at[op == 2]
    flat[sub] = _ACGT[(_BASE[flat[sub]] + rng.integers(1, 4, sub.shape[0])) & 3]
    grown = np.insert(flat, ins, _ACGT[rng.integers(0, 4, ins.shape[0])])
    edited = np.delete(grown, dele + np.searchsorted(ins, dele, side="right"))
    bounds = np.arange(READS + 1) * width
    length = width + np.diff(np.searchsorted(ins, bounds)) - np.diff(np.searchsorted(dele, bounds))
    if np.any(length < m):
        raise RuntimeError("a read ran short of source symbols")
    first = np.concatenate(([0], np.cumsum(length)[:-1]))
    reads = np.lib.stride_tricks.sliding_window_view(edited, m)[first]
    starts = rng.integers(0, size - width, (READS, CANDIDATES))
    slot = rng.integers(0, CANDIDATES, READS)
    starts[np.arange(READS), slot] = origin - m // 10
    starts = starts.ravel()
    offsets = np.arange(0, READS * m + 1, m, dtype=np.int64)
    pair_read = np.repeat(np.arange(READS, dtype=np.int64), CANDIDATES)
    # Read-only, as a genome that batch after batch of candidate regions are ranges of: edit
    # then leaves it on the GPU for the next batch (engine.edit.cuda._text_owner).
    genome = genome.view()
    genome.flags.writeable = False
    return genome, starts, starts + width, reads.ravel(), offsets, pair_read, m // 5, slot


def _device(threads_per_block=None):
    from engine import gpu

    return gpu.Device(threads_per_block or config.EDIT_CUDA_THREADS_PER_BLOCK)


def _gpu_run(m, variant, words=None, columns=None):
    from engine.edit.cuda import verify_arrays

    genome, starts, ends, reads, offsets, pair_read, k, slot = workload(m)
    saved = config.EDIT_CUDA_COLUMNS_PER_STEP
    if columns is not None:
        config.EDIT_CUDA_COLUMNS_PER_STEP = columns
    try:
        dev = _device()
        few = slice(0, 2 * CANDIDATES)  # warm-up: compiles (or loads) the kernels
        t0 = time.perf_counter()
        verify_arrays(dev, variant, genome, starts[few], ends[few], reads, offsets, pair_read[few],
                      k, words=words)
        warmup = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = verify_arrays(dev, variant, genome, starts, ends, reads, offsets, pair_read, k,
                            words=words)
        e2e = time.perf_counter() - t0
    finally:
        config.EDIT_CUDA_COLUMNS_PER_STEP = saved
    kernel = res.pairs.kernel_seconds
    cells = float(m) * float(np.sum(ends - starts))
    if m not in _reference:
        _reference[m] = (res.best, res.end)
        agrees = "reference"
    else:
        agrees = bool(np.array_equal(_reference[m][0], res.best)
                      and np.array_equal(_reference[m][1], res.end))
    true_pairs = np.arange(READS) * CANDIDATES + slot
    metrics = {"seconds": kernel, "pairs": len(starts), "cells": cells, "kernel_s": kernel,
               "TCUPS": cells / kernel / 1e12, "e2e_s": e2e, "TCUPS_e2e": cells / e2e / 1e12,
               "agrees": agrees, "true_found": float(np.mean(res.best[true_pairs] >= 0)),
               "mean_true_d": float(np.mean(res.best[true_pairs][res.best[true_pairs] >= 0])),
               "warmup_s": warmup, "device": dev.name}
    if variant == "cooperative" and m >= 400:
        metrics["goal_10TCUPS"] = "met" if metrics["TCUPS"] >= GOAL_TCUPS else "NOT MET"
    metrics["registers"] = ",".join(str(_registers(k)) for k in res.pairs.launched.values())
    return metrics


def _registers(kernel):
    """Registers per thread of a compiled kernel (numba reports one entry per signature)."""
    try:
        regs = kernel.get_regs_per_thread()
    except Exception:  # the simulator has no such figure
        return "-"
    return max(regs.values()) if isinstance(regs, dict) else regs


def _gpu_case(m, variant, words=None, columns=None):
    name = f"{variant}/cuda" + (f" w={words}" if words else "") + (f" c={columns}" if columns else "")
    return Case("edit", f"R{m}", name, lambda: _gpu_run(m, variant, words, columns),
                describe=f"read verification on CUDA, m={m}, {READS * CANDIDATES:,} pairs")


def _records(m, pairs):
    genome, starts, ends, reads, offsets, pair_read, k, _ = workload(m)
    queries = [Record(f"read{pair_read[i]}", reads[offsets[pair_read[i]]:offsets[pair_read[i] + 1]])
               for i in pairs]
    regions = [Record(f"cand{i}", genome[starts[i]:ends[i]]) for i in pairs]
    return queries, regions, k


def _columns(m, n):
    """The first n pairs as columns straight from the workload's arrays: each read stored
    once and read by range for each of its candidates, the regions ranges of the genome."""
    genome, starts, ends, reads, offsets, pair_read, k, _ = workload(m)
    read = pair_read[:n]
    queries = SeqColumns.from_ranges(reads, offsets[read], offsets[read + 1],
                                     Ids.numbered("read", n, read))
    regions = SeqColumns.from_ranges(genome, starts[:n], ends[:n], "cand")
    return queries, regions, k


def _flat_columns(m, n):
    """The first n pairs as one buffer of queries and one of regions with offsets (copies)."""
    genome, starts, ends, reads, offsets, pair_read, k, _ = workload(m)
    read = pair_read[:n]
    q_len, r_len = offsets[read + 1] - offsets[read], ends[:n] - starts[:n]

    def gather(codes, lo, lengths):
        flat = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=flat[1:])
        index = np.repeat(lo - flat[:-1], lengths) + np.arange(int(flat[-1]))
        return codes[index], flat

    queries = SeqColumns.from_offsets(*gather(reads, offsets[read], q_len),
                                      Ids.numbered("read", n, read))
    regions = SeqColumns.from_offsets(*gather(genome, starts[:n], r_len), "cand")
    return queries, regions, k


def _best_end(hits, n):
    """Per pair, the best distance and its end (-1 where none), from the hit columns."""
    best = np.full(n, -1, dtype=np.int64)
    end = np.full(n, -1, dtype=np.int64)
    best[hits.record] = hits.distance
    end[hits.record] = hits.end
    return best, end


def _agrees(m, sample, best, end):
    if m not in _reference:
        return None
    return bool(np.array_equal(_reference[m][0][sample], best)
                and np.array_equal(_reference[m][1][sample], end))


def _family_run(m, form="columns"):
    """edit.verify(..., backend='cuda') end to end on the first FAMILY_PAIRS pairs: from the
    workload's arrays (``columns``), from flat buffers with offsets (``flat``, made before
    the clock starts) or from Records (``records``, likewise); columnar hits out. The best of
    FAMILY_RUNS calls, and the first."""
    genome, starts, ends, *_ = workload(m)
    n = min(len(starts), FAMILY_PAIRS)
    options = dict(variant="cooperative", backend="cuda", align=False)
    made = None  # "columns": made from the arrays inside the clock
    if form == "flat":
        made = _flat_columns(m, n)
    elif form == "records":
        made = _records(m, range(n))

    def inputs():
        return made if made is not None else _columns(m, n)

    queries, regions, k = inputs()
    edit.verify(queries[:CANDIDATES], regions[:CANDIDATES], k, **options)  # compile or load
    walls = []
    for _ in range(FAMILY_RUNS):  # the first full-size call also takes the memory pools' blocks
        t0 = time.perf_counter()
        queries, regions, k = inputs()
        result = edit.verify(queries, regions, k, **options)
        walls.append(time.perf_counter() - t0)
    wall = min(walls)
    best, end = _best_end(result.hits, n)
    cells = float(m) * float(np.sum(ends[:n] - starts[:n]))
    metrics = {"seconds": wall, "first_s": walls[0], "runs": len(walls),
               "solve_s": result.info.seconds, "pairs": n,
               "TCUPS_e2e": cells / wall / 1e12, "TCUPS_e2e_first": cells / walls[0] / 1e12,
               "hits": len(result.hits)}
    agrees = _agrees(m, slice(0, n), best, end)
    if agrees is not None:
        metrics["agrees"] = agrees
    if form == "columns":
        metrics["goal_5TCUPS_e2e"] = "met" if metrics["TCUPS_e2e"] >= GOAL_E2E_TCUPS else "NOT MET"
        cpu = _cpu_on_family_pairs(m, n, best, end)
        metrics.update(cpu)
        metrics["vs_cpu"] = metrics["TCUPS_e2e"] / cpu["cpu_TCUPS"]
        metrics["goal_20x_cpu"] = "met" if metrics["vs_cpu"] >= GOAL_VS_CPU else "NOT MET"
    from engine.gpu import device_name

    metrics["device"] = device_name()
    return metrics


def _cpu_verify(m, n, sample):
    """(seconds, best, end, cells) of the multicore CPU (myers-blocked, the same columnar
    API) on the ``sample`` of the first ``n`` pairs, after a call that compiles or loads."""
    genome, starts, ends, *_ = workload(m)
    queries, regions, k = _columns(m, n)
    queries, regions = queries.take(sample), regions.take(sample)
    options = dict(variant="myers-blocked", backend="multicore", align=False)
    edit.verify(queries[:2], regions[:2], k, **options)  # compile or load
    t0 = time.perf_counter()
    result = edit.verify(queries, regions, k, **options)
    seconds = time.perf_counter() - t0
    best, end = _best_end(result.hits, len(sample))
    return seconds, best, end, float(m) * float(np.sum(ends[sample] - starts[sample]))


def _cpu_on_family_pairs(m, n, gpu_best, gpu_end):
    """The multicore CPU (myers-blocked, the same columnar API) on a seeded sample of the
    family row's pairs, and whether it agrees with the GPU there."""
    sample = np.sort(np.random.default_rng(m + 1).choice(n, min(n, FAMILY_CPU_PAIRS),
                                                         replace=False))
    seconds, best, end, cells = _cpu_verify(m, n, sample)
    return {"cpu_pairs": len(sample), "cpu_s": seconds, "cpu_TCUPS": cells / seconds / 1e12,
            "cpus": os.cpu_count(),
            "cpu_agrees": bool(np.array_equal(gpu_best[sample], best)
                               and np.array_equal(gpu_end[sample], end))}


def _cpu_check(m):
    """The CPU (multicore myers-blocked) on a sample of pairs, against the GPU's answers."""
    starts = workload(m)[1]
    rng = np.random.default_rng(m)
    sample = np.sort(rng.choice(len(starts), min(CPU_SAMPLE, len(starts)), replace=False))
    seconds, best, end, cells = _cpu_verify(m, len(starts), sample)
    metrics = {"pairs": len(sample), "GCUPS": cells / seconds / 1e9, "cpus": os.cpu_count()}
    agrees = _agrees(m, sample, best, end)
    if agrees is not None:
        metrics["agrees_with_gpu"] = agrees
    # Seconds scaled to all pairs, so that the ratio against a GPU row compares equal work.
    metrics["seconds"] = seconds * len(starts) / len(sample)
    metrics["sample_s"] = seconds
    return metrics


def cases(opts) -> list[Case]:
    out = []
    for m in READ_LENGTHS:
        w = f"R{m}"
        out.append(_gpu_case(m, "cooperative", config.EDIT_CUDA_WORDS_PER_THREAD))
        out += [_gpu_case(m, "cooperative", words) for words in WORDS
                if words != config.EDIT_CUDA_WORDS_PER_THREAD]
        out += [_gpu_case(m, "cooperative", config.EDIT_CUDA_WORDS_PER_THREAD, c) for c in (1, 4)
                if c != config.EDIT_CUDA_COLUMNS_PER_STEP]
        out.append(_gpu_case(m, "cooperative", max(WORDS), 4))
        out.append(_gpu_case(m, "task"))
        out.append(Case("edit", w, "cooperative/cuda verify() columns", lambda m=m: _family_run(m),
                        describe="edit.verify(queries, regions, k, backend='cuda') from the "
                                 "workload's arrays (SeqColumns ranges), with the CPU on a sample"))
        out.append(Case("edit", w, "cooperative/cuda verify() flat columns",
                        lambda m=m: _family_run(m, "flat"),
                        describe="edit.verify from one buffer of queries and one of regions "
                                 "with offsets"))
        out.append(Case("edit", w, "cooperative/cuda verify() from Records",
                        lambda m=m: _family_run(m, "records"),
                        describe="edit.verify(queries, regions, k, backend='cuda') from Records"))
        out.append(Case("edit", w, "cpu check (peer)", lambda m=m: _cpu_check(m),
                        describe=f"edit.verify on the CPU for {CPU_SAMPLE} sampled pairs"))
    return out
