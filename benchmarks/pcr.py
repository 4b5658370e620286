"""In-silico PCR against its peers (issue 18): ipcress (Debian ``exonerate``) and primersearch
(Debian ``emboss``), in the same run on the same files.

PCR20: 20 pairs (40 primers of 20 nt) taken from E. coli 536, products of 250-800 bp,
       half of them from the reverse strand, some primers with 1-3 substitutions away
       from their 3' window; searched in all of E. coli 536 (4.9 Mb, both strands)
       with at most 3 mismatches per primer (ipcress ``--mismatch 3``, primersearch
       ``-mismatchpercent 15``, ours ``--max-edits 3`` with the 3' rule off).

Every case is a command run in a subprocess on the same files, timed by its wall
clock (start-up and file reading included on every side): ``primerscope pcr`` on 2
threads (edits, then mismatch-only ``--no-indels``), ipcress and primersearch. A
peer that is not installed gives a row that says so. ``solve_s`` is our run's own
``seconds`` (the search and pairing, without loading and start-up).

Checks, reported as metrics: ours (3' rule off, same product range) is a superset of
ipcress's products (``superset_of_ipcress``: the same primers on the same amplicon,
whose ends may shift by up to 3 where an alignment with indels needs fewer edits than
the mismatches ipcress counts), and equal to them in mismatch-only mode
(``equal_to_ipcress``: the same coordinates) on the products within a pair (ipcress
pairs the primers of one experiment only; ours pairs the whole set, ``cross_pair``
counts the rest).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from benchmarks import Case, Ratio, data
from engine.sequences import decode, encode, reverse_complement

ROOT = Path(__file__).resolve().parents[1]
PAIRS = 20
PRIMER_LENGTH = 20
PRODUCT = (250, 800)
MISMATCHES = 3

RATIOS = (
    Ratio("PCR20", "primerscope pcr multicore (CLI)", "ipcress (CLI)", 1.0,
          "in-silico PCR, 40 primers in E. coli: primerscope vs ipcress, wall"),
    Ratio("PCR20", "primerscope pcr multicore --no-indels (CLI)", "ipcress (CLI)", 1.0,
          "  the same, mismatch-only"),
    Ratio("PCR20", "primerscope pcr multicore (CLI)", "primersearch (CLI)", None,
          "  primerscope vs primersearch, wall"),
)


def _substitute(rng, seq: str, count: int) -> str:
    """``count`` substitutions outside the 3' window (the first 15 bases)."""
    s = list(seq)
    for at in rng.choice(PRIMER_LENGTH - 5, count, replace=False):
        s[at] = {"A": "C", "C": "G", "G": "T", "T": "A"}[s[at]]
    return "".join(s)


@lru_cache(maxsize=None)
def workload():
    """(primer pairs [(name, forward, reverse)], directory with ecoli.fa, primers.csv,
    ipcress.txt, primersearch.txt)."""
    rng = np.random.default_rng(18)
    genome = data.ecoli()
    text = genome.text
    rc_text = decode(reverse_complement(genome.codes))
    pairs = []
    for i in range(PAIRS):
        size = int(rng.integers(PRODUCT[0], PRODUCT[1] + 1))
        source = text if i % 2 == 0 else rc_text  # odd pairs amplify the reverse strand
        at = int(rng.integers(0, len(source) - size))
        fwd = source[at:at + PRIMER_LENGTH]
        rev = decode(reverse_complement(encode(source[at + size - PRIMER_LENGTH:at + size])))
        fwd = _substitute(rng, fwd, i % 4)
        pairs.append((f"pair{i + 1}", fwd, rev))
    folder = Path(tempfile.mkdtemp(prefix="primerscope-pcr-bench-"))
    with open(folder / "ecoli.fa", "w") as fh:
        fh.write(f">{genome.id}\n")
        for lo in range(0, len(text), 80):
            fh.write(text[lo:lo + 80] + "\n")
    with open(folder / "primers.csv", "w") as fh:
        fh.write("name,sequence\n")
        for name, f, r in pairs:
            fh.write(f"{name}.F,{f}\n{name}.R,{r}\n")
    with open(folder / "ipcress.txt", "w") as fh:
        for name, f, r in pairs:
            fh.write(f"{name} {f} {r} {PRODUCT[0]} {PRODUCT[1]}\n")
    with open(folder / "primersearch.txt", "w") as fh:
        for name, f, r in pairs:
            fh.write(f"{name}\t{f}\t{r}\n")
    return tuple(pairs), folder


def _run(cmd) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=3600)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {(done.stderr or done.stdout).strip()[-300:]}")
    return seconds, done.stdout


def _ipcress_products(out: str, pairs) -> set:
    """{(pair, forward primer, reverse primer, start, end)}: 1-based inclusive."""
    length = {}
    for name, f, r in pairs:
        length[(name, "A")] = len(f)
        length[(name, "B")] = len(r)
    found = set()
    for line in out.splitlines():
        if not line.startswith("ipcress:"):
            continue
        f = line.split()
        exp, p1, pos1, p2, pos2 = f[2], f[4], int(f[5]), f[7], int(f[8])
        start, end = pos1 + 1, pos2 + length[(exp, p2)]
        found.add((exp, f"{exp}.{'F' if p1 == 'A' else 'R'}", f"{exp}.{'F' if p2 == 'A' else 'R'}",
                   start, end))
    return found


@lru_cache(maxsize=None)
def ipcress():
    exe = shutil.which("ipcress")
    if exe is None:
        raise ImportError("ipcress is not installed (Debian package exonerate)")
    pairs, folder = workload()
    seconds, out = _run([exe, "--input", str(folder / "ipcress.txt"), "--sequence",
                         str(folder / "ecoli.fa"), "--mismatch", str(MISMATCHES), "--pretty",
                         "FALSE"])
    return seconds, _ipcress_products(out, pairs)


@lru_cache(maxsize=None)
def primersearch():
    exe = shutil.which("primersearch")
    if exe is None:
        raise ImportError("primersearch is not installed (Debian package emboss)")
    pairs, folder = workload()
    out_file = folder / "primersearch.out"
    percent = int(round(100 * MISMATCHES / PRIMER_LENGTH))
    seconds, _ = _run([exe, "-seqall", str(folder / "ecoli.fa"), "-infile",
                       str(folder / "primersearch.txt"), "-mismatchpercent", str(percent),
                       "-outfile", str(out_file), "-auto"])
    lengths = []
    for line in out_file.read_text().splitlines():
        line = line.strip()
        if line.startswith("Amplimer length:"):
            lengths.append(int(line.split()[2]))
    return seconds, sum(1 for n in lengths if PRODUCT[0] <= n <= PRODUCT[1])


@lru_cache(maxsize=None)
def primerscope(indels: bool, threads: int):
    _, folder = workload()
    cmd = [sys.executable, "-m", "engine.cli", "pcr", str(folder / "primers.csv"),
           str(folder / "ecoli.fa"), "--max-edits", str(MISMATCHES), "--max-3prime-edits",
           str(MISMATCHES), "--min-product", str(PRODUCT[0]), "--max-product", str(PRODUCT[1]),
           "--backend", "multicore", "--threads", str(threads), "--json", "--no-progress"]
    if not indels:
        cmd.append("--no-indels")
    _run(cmd)  # the first run may compile kernels into numba's cache: not timed
    seconds, out = _run(cmd)
    payload = json.loads(out)
    found = set()
    for p in payload["products"]:
        found.add((p["forward"].split(".")[0], p["forward"], p["reverse"], p["start"], p["end"]))
    return seconds, payload["seconds"], found


def _same_amplicon(theirs, ours) -> bool:
    """The same primers on the same amplicon. With indels, a site with mismatches may be
    reported by an alignment with fewer edits whose ends shift by up to the edits."""
    return (theirs[:3] == ours[:3] and abs(theirs[3] - ours[3]) <= MISMATCHES
            and abs(theirs[4] - ours[4]) <= MISMATCHES)


def _ours_case(name, indels, threads):
    def run():
        seconds, solve_s, found = primerscope(indels, threads)
        same_pair = {p for p in found if p[1].split(".")[0] == p[2].split(".")[0]}
        metrics = {"seconds": seconds, "solve_s": solve_s, "products": len(found),
                   "cross_pair": len(found) - len(same_pair)}
        try:
            _, theirs = ipcress()
        except ImportError:
            return metrics
        if indels:
            missing = [t for t in theirs if not any(_same_amplicon(t, o) for o in same_pair)]
            metrics["superset_of_ipcress"] = not missing
        else:
            missing = theirs - same_pair
            metrics["equal_to_ipcress"] = theirs == same_pair
        metrics["ipcress_missing"] = len(missing)
        return metrics

    return Case("pcr", "PCR20", name, run, describe="in-silico PCR of 40 primers in E. coli 536")


def cases(opts) -> list[Case]:
    threads = getattr(opts, "threads", None) or 2

    def run_ipcress():
        seconds, found = ipcress()
        return {"seconds": seconds, "products": len(found)}

    def run_primersearch():
        seconds, count = primersearch()
        return {"seconds": seconds, "products": count}

    return [
        Case("pcr", "PCR20", "ipcress (CLI)", run_ipcress, describe="ipcress --mismatch 3"),
        Case("pcr", "PCR20", "primersearch (CLI)", run_primersearch,
             describe="primersearch -mismatchpercent 15"),
        _ours_case("primerscope pcr multicore (CLI)", True, threads),
        _ours_case("primerscope pcr multicore --no-indels (CLI)", False, threads),
    ]
