"""The DNA the benchmarks use: the real sequences shipped in resources/demo (loaded once),
and a deterministic human-like synthetic genome for the scale benchmarks (issue 17)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from engine.sequences import Record, load

DEMO_DIR = Path(__file__).resolve().parents[1] / "resources" / "demo"


@lru_cache(maxsize=None)
def lambda_phage() -> Record:
    return load(DEMO_DIR / "lambda_NC_001416.fa")[0]


@lru_cache(maxsize=None)
def ecoli() -> Record:
    return load(DEMO_DIR / "ecoli536_NC_008253.fna.gz")[0]


@lru_cache(maxsize=None)
def ecoli_repeated(copies: int, *, records: bool = False) -> tuple[Record, ...]:
    """E. coli 536 ``copies`` times, a genome-scale text: one record of the copies end to end
    (kmismatch's T3x20), or with ``records`` one record per copy, ``<id>_<i>`` (in-silico
    PCR's PCR1000x20: products never cross records, so every copy amplifies alike)."""
    eco = ecoli()
    if copies == 1:
        return (eco,)
    if records:  # the copies share one array: nothing writes it
        return tuple(Record(f"{eco.id}_{i + 1}", eco.codes, eco.description, eco.source)
                     for i in range(copies))
    return (Record(f"{eco.id}x{copies}", np.tile(eco.codes, copies), eco.description, eco.source),)


def write_fasta(path, records) -> None:
    """Records as FASTA, 80 bases a line (the files peers and our CLI read alike)."""
    with open(path, "wb") as fh:
        for rec in records:
            fh.write(f">{rec.id}\n".encode())
            letters = np.frombuffer(rec.text.encode("ascii"), dtype=np.uint8)
            n = letters.shape[0]
            full = n - n % 80
            lines = np.empty((full // 80, 81), dtype=np.uint8)
            lines[:, :80] = letters[:full].reshape(-1, 80)
            lines[:, 80] = ord("\n")
            fh.write(lines.tobytes())
            if full < n:
                fh.write(letters[full:].tobytes() + b"\n")


@lru_cache(maxsize=None)
def msx2() -> tuple[Record, ...]:
    return tuple(load(DEMO_DIR / "msx2_mrna_homologs.fa"))



# ---------------------------------------------------------------------------- synthetic genome
# A human-like genome for the scale benchmarks (issue 17), made deterministically from a seed.
# Real genomes make kdiff candidates longer because of their repeats: a target base inside a
# repeat copy occurs, within a few edits, in thousands of other copies. A uniform random
# background would hide that. The figures below are the human genome's, roughly.

_A, _C, _G, _T, _N = 1, 2, 4, 8, 15
_BASES = np.array([_A, _C, _G, _T], dtype=np.uint8)
_LETTERS = np.frombuffer(b"?ACMGRSVTWYHKDBN", dtype=np.uint8)

#: GC fraction of the isochore families (L1, L2, H1, H2, H3) and their share of the genome.
ISOCHORE_GC = (0.37, 0.41, 0.46, 0.50, 0.53)
ISOCHORE_SHARE = (0.30, 0.33, 0.24, 0.08, 0.05)
#: Isochore lengths are drawn from this range (bases).
ISOCHORE_LENGTH = (100_000, 1_000_000)


@dataclass(frozen=True)
class RepeatFamily:
    """Copies of a consensus: ``share`` of the genome, each copy ``divergence`` away from its
    subfamily's consensus (substitutions and 1-3 base indels), subfamilies ``subfamily``
    away from the master. ``truncate``: copies keep a random 3' part (L1's 5' truncation)."""

    name: str
    length: int
    share: float
    divergence: tuple[float, float]
    subfamilies: int = 8
    subfamily: float = 0.04
    truncate: bool = False
    gc: float = 0.5


REPEATS = (
    RepeatFamily("alu", 300, 0.10, (0.04, 0.18), subfamilies=12, gc=0.52),
    RepeatFamily("l1", 6_000, 0.17, (0.05, 0.28), subfamilies=10, truncate=True, gc=0.42),
)
#: Tandem repeats: microsatellites (unit 1-6) and alpha-satellite-like arrays (unit 171).
MICROSATELLITE_SHARE = 0.01
SATELLITE_SHARE = 0.02
#: N runs: gaps between contigs (their count per Mb and length range), plus one long
#: (centromere-like) run per chromosome of this share of it.
N_RUNS_PER_MB = 0.5
N_RUN_LENGTH = (100, 50_000)
N_CENTROMERE_SHARE = 0.01
#: N at each end of a chromosome, as every GRCh38 chromosome starts (and most end) with 10 kb.
N_TELOMERE = 10_000
#: Bases generated at a time (a block is made whole, then written).
SYNTH_BLOCK = 1 << 23


def _random_bases(rng, n: int, gc: float) -> np.ndarray:
    u = rng.integers(0, 1 << 16, n, dtype=np.uint16)
    a = int((1 - gc) / 2 * 65536)
    # A below a, C below a + gc/2, G below a + gc, T above (three compares, no searchsorted)
    idx = (u >= a).astype(np.uint8)
    idx += u >= a + int(gc / 2 * 65536)
    idx += u >= a + int(gc * 65536)
    return _BASES[idx]


def _mutate(rng, seq: np.ndarray, rate: float) -> np.ndarray:
    """Substitutions at ``rate`` x 0.85 and 1-3 base indels at ``rate`` x 0.15."""
    n = seq.shape[0]
    out = seq.copy()
    subs = np.flatnonzero(rng.random(n) < rate * 0.85)
    out[subs] = _BASES[(np.searchsorted(_BASES, out[subs]) + rng.integers(1, 4, subs.shape[0])) % 4]
    indels = np.flatnonzero(rng.random(n) < rate * 0.15 / 2)
    if indels.shape[0] == 0:
        return out
    keep = np.ones(n, dtype=bool)
    pieces, last = [], 0
    for pos in indels:
        size = int(rng.integers(1, 4))
        if rng.random() < 0.5:  # deletion
            keep[pos:pos + size] = False
        else:  # insertion before pos
            pieces.append(out[last:pos][keep[last:pos]])
            pieces.append(_BASES[rng.integers(0, 4, size)])
            last = pos
    pieces.append(out[last:][keep[last:]])
    return np.concatenate(pieces)


@lru_cache(maxsize=None)
def _consensi(seed: int) -> dict:
    """Each family's subfamily consensus sequences (fixed by the seed alone)."""
    rng = np.random.default_rng([seed, 17])
    out = {}
    for fam in REPEATS:
        master = _random_bases(rng, fam.length, fam.gc)
        out[fam.name] = [_mutate(rng, master, fam.subfamily) for _ in range(fam.subfamilies)]
    return out


def _place(block: np.ndarray, soft: np.ndarray, copies: list[np.ndarray], rng) -> None:
    """Overwrite random places of ``block`` with ``copies`` (later copies may land on earlier
    ones, as nested insertions do) and mark them soft-masked."""
    n = block.shape[0]
    for copy in copies:
        if copy.shape[0] >= n:
            continue
        at = int(rng.integers(0, n - copy.shape[0]))
        block[at:at + copy.shape[0]] = copy
        soft[at:at + copy.shape[0]] = True


def synthetic_block(seed: int, chrom: int, index: int, n: int,
                    n_runs: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Codes and soft-mask of block ``index`` of chromosome ``chrom`` (``n`` bases); without
    ``n_runs``, the gaps keep their random bases."""
    rng = np.random.default_rng([seed, chrom, index])
    parts, made = [], 0
    while made < n:  # isochores
        size = min(n - made, int(rng.integers(*ISOCHORE_LENGTH)))
        gc = ISOCHORE_GC[int(rng.choice(len(ISOCHORE_GC), p=ISOCHORE_SHARE))]
        parts.append(_random_bases(rng, size, gc))
        made += size
    block = np.concatenate(parts)
    soft = np.zeros(n, dtype=bool)
    cons = _consensi(seed)
    for fam in REPEATS:
        copies, total = [], 0
        while total < fam.share * n:
            sub = cons[fam.name][int(rng.integers(len(cons[fam.name])))]
            if fam.truncate:  # most L1 copies keep only their 3' end (mean ~1 kb)
                keep = min(sub.shape[0], int(rng.exponential(1000)) + 100)
                sub = sub[sub.shape[0] - keep:]
            copy = _mutate(rng, sub, float(rng.uniform(*fam.divergence)))
            if rng.random() < 0.5:
                copy = _RC[copy[::-1]]
            copies.append(copy)
            total += copy.shape[0]
        _place(block, soft, copies, rng)
    copies, total = [], 0
    while total < MICROSATELLITE_SHARE * n:
        unit = _random_bases(rng, int(rng.integers(1, 7)), 0.4)
        copies.append(_mutate(rng, np.tile(unit, int(rng.integers(20, 200)) // unit.shape[0] + 1),
                              0.03))
        total += copies[-1].shape[0]
    while total < (MICROSATELLITE_SHARE + SATELLITE_SHARE) * n:
        unit = _satellite_unit(seed)
        array = np.concatenate([_mutate(rng, unit, float(rng.uniform(0.02, 0.1)))
                                for _ in range(int(rng.integers(20, 200)))])
        copies.append(array)
        total += array.shape[0]
    _place(block, soft, copies, rng)
    for _ in range(rng.poisson(N_RUNS_PER_MB * n / 1e6)):
        size = int(rng.integers(*N_RUN_LENGTH))
        at = int(rng.integers(0, max(1, n - size)))
        if n_runs:
            block[at:at + size] = _N
    return block, soft


@lru_cache(maxsize=None)
def _satellite_unit(seed: int) -> np.ndarray:
    return _random_bases(np.random.default_rng([seed, 171]), 171, 0.38)


_RC = np.zeros(16, dtype=np.uint8)
_RC[[_A, _C, _G, _T, _N]] = [_T, _G, _C, _A, _N]


def chromosome_lengths(total: int, chromosomes: int | None = None) -> list[int]:
    """Chromosome sizes adding up to ``total`` (larger first, as in an assembly)."""
    count = chromosomes or max(1, min(24, total // 50_000_000 + 1))
    weights = np.linspace(2.0, 1.0, count)
    sizes = (weights / weights.sum() * total).astype(np.int64)
    sizes[0] += total - sizes.sum()
    return [int(s) for s in sizes]


def synthetic_chromosome(seed: int, chrom: int, length: int, n_runs: bool = True):
    """Yield (codes, soft-mask) blocks of chromosome ``chrom``; with ``n_runs`` its middle
    holds a centromere-like N run and each end ``N_TELOMERE`` N (up to a tenth of it)."""
    centre = length // 2
    gap = int(length * N_CENTROMERE_SHARE) if n_runs else 0
    ends = min(N_TELOMERE, length // 10) if n_runs else 0
    runs = [(centre - gap // 2, centre + gap // 2), (0, ends), (length - ends, length)]
    for index, lo in enumerate(range(0, length, SYNTH_BLOCK)):
        n = min(SYNTH_BLOCK, length - lo)
        codes, soft = synthetic_block(seed, chrom, index, n, n_runs)
        for start, end in runs:
            a, b = max(lo, start), min(lo + n, end)
            if b > a:
                codes[a - lo:b - lo] = _N
        yield codes, soft


def write_synthetic_fasta(path, total: int, *, seed: int = 17, chromosomes: int | None = None,
                          line: int = 60, n_runs: bool = True) -> list[tuple[str, int]]:
    """Write a human-like genome of ``total`` bases as FASTA (soft-masked repeats in lower
    case, ``line`` bases a line); return [(record id, length)]. Same arguments, same file.

    ``n_runs=False`` leaves out the gaps' N runs (a clean genome to compare with). With the
    assembly-gap rule (engine.gaps) they match nothing; before it, an N run as long as a
    candidate held every candidate within k-1 edits and kdiff found no candidate at all."""
    from engine.output import open_output

    records = []
    with open_output(str(path), "wb") as fh:
        for chrom, length in enumerate(chromosome_lengths(total, chromosomes), start=1):
            name = f"chr{chrom}"
            gaps = "" if n_runs else ", no N runs"
            fh.write(f">{name} synthetic human-like chromosome {chrom} (seed {seed}{gaps})\n"
                     .encode())
            carry = np.zeros(0, dtype=np.uint8)
            for codes, soft in synthetic_chromosome(seed, chrom, length, n_runs):
                letters = _LETTERS[codes]
                letters[soft & (codes != _N)] |= 0x20
                letters = np.concatenate([carry, letters])
                full = letters.shape[0] // line * line
                if full:
                    rows = letters[:full].reshape(-1, line)
                    fh.write(np.hstack([rows, np.full((rows.shape[0], 1), 10, np.uint8)]).tobytes())
                carry = letters[full:]
            if carry.shape[0]:
                fh.write(carry.tobytes() + b"\n")
            records.append((name, length))
    return records


def synthetic_region(length: int, *, seed: int = 17, at: int = 1_000_000) -> Record:
    """A human-like region that is in no synthetic store (a chromosome numbered 0, which
    the FASTA writer never writes): the scale benchmarks' target."""
    codes, _ = synthetic_block(seed, 0, 0, max(at + length, 2 * length), n_runs=False)
    region = codes[at:at + length]
    return Record(f"synthetic_region_{length}", region.copy(), "human-like region", "<synthetic>")


# -- synthetic groups (issue 30: group-specific primers) ---------------------------------------
#
# A species ancestor of "genes" (blocks); strains of it at 0.5-3 % pairwise divergence (SNPs
# and 1-3 base indels), each having lost a few genes, gained one of its own, with an inverted
# and a moved segment, as a draft of a few contigs; group-specific islands that every strain
# carries and no relative does; relatives at 10-20 % from the ancestor (without the islands);
# and unrelated random genomes. Made with numpy from a seed: the same seed, the same genomes.

GROUP_GENE = 1_000


@dataclass(frozen=True)
class SyntheticGroup:
    include: tuple     # engine.primers.group.Genome: the strains
    exclude: tuple     # relatives, then unrelated genomes
    islands: tuple     # the group-specific islands as inserted (codes), one per island


def _diverge(rng, seq: np.ndarray, rate: float) -> np.ndarray:
    """:func:`_mutate`'s model (substitutions at ``rate`` x 0.85, 1-3 base indels at ``rate``
    x 0.15), every draw made in bulk: _mutate loops in Python per indel, ~75,000 of them for
    a 5 Mb relative at 20 %. (_mutate stays as it is: its draws fix the human-like synthetic
    genomes other benchmarks have recorded.)"""
    n = seq.shape[0]
    out = seq.copy()
    subs = np.flatnonzero(rng.random(n, dtype=np.float32) < rate * 0.85)
    out[subs] = _BASES[(np.searchsorted(_BASES, out[subs]) + rng.integers(1, 4, subs.shape[0])) % 4]
    at = np.flatnonzero(rng.random(n, dtype=np.float32) < rate * 0.15 / 2)
    size = rng.integers(1, 4, at.shape[0])
    deletion = rng.random(at.shape[0]) < 0.5
    keep = np.ones(n, dtype=bool)
    for s in range(3):   # a deletion of size bases from its position on
        gone = at[deletion & (size > s)] + s
        keep[gone[gone < n]] = False
    before = np.repeat(at[~deletion], size[~deletion])   # an insertion before its position
    out = np.insert(out, before, _BASES[rng.integers(0, 4, before.shape[0])])
    keep = np.insert(keep, before, True)
    return out[keep]


def _rearranged(rng, seq: np.ndarray) -> np.ndarray:
    """One segment inverted and one moved elsewhere (5-10 % of the genome each)."""
    from engine.sequences import reverse_complement

    n = len(seq)
    size = max(1, int(n * rng.uniform(0.05, 0.10)))
    at = int(rng.integers(0, max(1, n - size)))
    seq = np.concatenate((seq[:at], reverse_complement(seq[at:at + size]), seq[at + size:]))
    at = int(rng.integers(0, max(1, n - size)))
    piece, rest = seq[at:at + size], np.concatenate((seq[:at], seq[at + size:]))
    to = int(rng.integers(0, len(rest) + 1))
    return np.concatenate((rest[:to], piece, rest[to:]))


def synthetic_group(strains: int = 12, relatives: int = 20, unrelated: int = 20,
                    length: int = 5_000_000, *, islands: int = 4, island_length: int = 2_000,
                    contigs: int = 3, seed: int = 30) -> SyntheticGroup:
    """A group of ``strains`` and an exclusion set of ``relatives`` + ``unrelated`` genomes
    of about ``length`` bases each (see above). Strain i's genome is ``strain{i}``, a draft
    of ``contigs`` records (cut at random places)."""
    from engine.primers.group import Genome

    rng = np.random.default_rng(seed)
    ancestor = _random_bases(rng, length, 0.5)
    island_seqs = tuple(_random_bases(rng, island_length, 0.5) for _ in range(islands))
    include = []
    for i in range(strains):
        rate = rng.uniform(0.0025, 0.015)   # from the ancestor: 0.5-3 % between two strains
        s = _diverge(rng, ancestor, rate)
        genes = len(s) // GROUP_GENE
        lost = set(rng.choice(genes, size=min(2, genes), replace=False).tolist())
        kept = [s[g * GROUP_GENE:(g + 1) * GROUP_GENE] for g in range(genes) if g not in lost]
        kept.append(s[genes * GROUP_GENE:])
        kept.insert(int(rng.integers(0, len(kept) + 1)), _random_bases(rng, GROUP_GENE, 0.5))
        s = _rearranged(rng, np.concatenate(kept))
        # The islands, each at a place of this strain's own (islands move between strains);
        # no contig cut falls in one, so every strain carries each whole.
        spots = np.sort(rng.integers(0, len(s) + 1, size=len(island_seqs)))
        parts, inside, last, at = [], [], 0, 0
        for spot, island in zip(spots.tolist(), island_seqs):
            parts.append(s[last:spot])
            at += spot - last
            mutated = _diverge(rng, island, rate)
            parts.append(mutated)
            inside.append((at, at + len(mutated)))
            at += len(mutated)
            last = spot
        parts.append(s[last:])
        s = np.concatenate(parts)
        allowed = np.ones(len(s), dtype=bool)
        allowed[0] = False
        for lo, hi in inside:
            allowed[lo:hi + 1] = False
        cuts = np.sort(rng.choice(np.flatnonzero(allowed), size=max(0, contigs - 1),
                                  replace=False))
        records = tuple(Record(f"strain{i + 1}_contig{j + 1}", p)
                        for j, p in enumerate(np.split(s, cuts)))
        include.append(Genome(f"strain{i + 1}", records))
    exclude = []
    for i in range(relatives):
        r = _rearranged(rng, _diverge(rng, ancestor, rng.uniform(0.10, 0.20)))
        exclude.append(Genome(f"relative{i + 1}", (Record(f"relative{i + 1}", r),)))
    for i in range(unrelated):
        exclude.append(Genome(f"unrelated{i + 1}",
                              (Record(f"unrelated{i + 1}", _random_bases(rng, length, 0.5)),)))
    return SyntheticGroup(tuple(include), tuple(exclude), island_seqs)
