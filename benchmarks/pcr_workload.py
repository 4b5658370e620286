"""In-silico PCR workloads and the runs of every tool on them (issue 18), shared by
benchmarks/pcr.py (PCR20, CPU) and benchmarks/pcr_cuda.py (PCR1000x20, GPU).

A :class:`Workload` draws primer pairs from E. coli 536 with a fixed seed: each pair's
product (its size drawn from the product range) lies on the forward strand for even
pairs and on the reverse strand for odd ones, and forward primer i carries i mod 4
substitutions away from its 3' window. The background is E. coli 536 ``copies`` times,
one record per copy (data.ecoli_repeated). Every tool is a command run in a
subprocess on the same files and timed by its wall clock, start-up and file reading
included: ipcress (Debian ``exonerate``; where the system has none, the copy that
scripts/peers-carry puts in .gl/peers), primersearch (Debian ``emboss``) and
``primerscope pcr``.

Products are compared as (record, pair, forward primer, reverse primer, start, end),
1-based inclusive. ipcress pairs the primers of one experiment (pair) only; ours pairs
the whole set, so only our products within a pair are compared with ipcress's.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from benchmarks import data
from engine.sequences import decode, encode, reverse_complement

ROOT = Path(__file__).resolve().parents[1]
#: ipcress and its libraries for a machine without apt (scripts/peers-carry builds it).
PEERS = ROOT / ".gl" / "peers"
#: Bases at a primer's 3' end that the workload never substitutes.
THREE_PRIME = 5


@dataclass(frozen=True)
class Workload:
    """``pairs`` primer pairs of ``lengths`` (inclusive range) nt, products of ``product``
    bp, searched in ``copies`` copies of E. coli 536 with at most ``mismatches``."""

    name: str
    pairs: int
    lengths: tuple[int, int]
    product: tuple[int, int] = (250, 800)
    copies: int = 1
    mismatches: int = 3
    seed: int = 18


def _substitute(rng, seq: str, count: int) -> str:
    """``count`` substitutions outside the 3' window (the last THREE_PRIME bases)."""
    s = list(seq)
    for at in rng.choice(len(seq) - THREE_PRIME, count, replace=False):
        s[at] = {"A": "C", "C": "G", "G": "T", "T": "A"}[s[at]]
    return "".join(s)


@lru_cache(maxsize=None)
def primer_pairs(w: Workload) -> tuple[tuple[str, str, str], ...]:
    """((name, forward, reverse), ...), 5'->3'."""
    rng = np.random.default_rng(w.seed)
    genome = data.ecoli()
    text = genome.text
    rc_text = decode(reverse_complement(genome.codes))
    pairs = []
    for i in range(w.pairs):
        size = int(rng.integers(w.product[0], w.product[1] + 1))
        source = text if i % 2 == 0 else rc_text  # odd pairs amplify the reverse strand
        at = int(rng.integers(0, len(source) - size))
        if w.lengths[0] == w.lengths[1]:
            lf = lr = w.lengths[0]
        else:
            lf, lr = (int(n) for n in rng.integers(w.lengths[0], w.lengths[1] + 1, 2))
        fwd = source[at:at + lf]
        rev = decode(reverse_complement(encode(source[at + size - lr:at + size])))
        pairs.append((f"pair{i + 1}", _substitute(rng, fwd, i % 4), rev))
    return tuple(pairs)


@lru_cache(maxsize=None)
def folder(w: Workload) -> Path:
    """A directory with the primers as every tool reads them: primers.csv (ours),
    ipcress.txt and primersearch.txt."""
    out = Path(tempfile.mkdtemp(prefix=f"primerscope-{w.name}-"))
    pairs = primer_pairs(w)
    with open(out / "primers.csv", "w") as fh:
        fh.write("name,sequence\n")
        for name, f, r in pairs:
            fh.write(f"{name}.F,{f}\n{name}.R,{r}\n")
    with open(out / "ipcress.txt", "w") as fh:
        for name, f, r in pairs:
            fh.write(f"{name} {f} {r} {w.product[0]} {w.product[1]}\n")
    with open(out / "primersearch.txt", "w") as fh:
        for name, f, r in pairs:
            fh.write(f"{name}\t{f}\t{r}\n")
    return out


@lru_cache(maxsize=None)
def background(w: Workload, copies: int | None = None) -> Path:
    """The background FASTA: the workload's first ``copies`` records (default: all)."""
    copies = w.copies if copies is None else copies
    path = folder(w) / f"background-x{copies}.fa"
    data.write_fasta(path, data.ecoli_repeated(w.copies, records=True)[:copies])
    return path


def run(cmd, env=None) -> tuple[float, str]:
    """(wall seconds, stdout) of a command; a failure raises with the end of its stderr."""
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=3600, env=env)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{Path(cmd[0]).name} failed: {(done.stderr or done.stdout).strip()[-300:]}")
    return seconds, done.stdout


def extrapolate(runs: dict, copies: int) -> float:
    """Seconds on ``copies`` copies from runs on two counts of copies ({copies: seconds}), on
    the line through them: a fixed part (start-up, primer tables) and a part per copy."""
    (a, ta), (b, tb) = sorted(runs.items())
    return ta + (copies - a) * max(tb - ta, 0.0) / (b - a)


# -------------------------------------------------------------------------------- ipcress
def ipcress_command() -> tuple[str, dict | None]:
    """The ipcress to run and its environment: the system's, else the copy in .gl/peers
    (scripts/peers-carry), run with its own libraries on LD_LIBRARY_PATH."""
    exe = shutil.which("ipcress")
    local = PEERS / "bin" / "ipcress"
    if exe is None and local.is_file():
        exe = str(local)
    if exe is None:
        raise ImportError("ipcress is not installed (Debian package exonerate; scripts/bench-peers "
                          "installs it, scripts/peers-carry builds .gl/peers for a machine "
                          "without apt)")
    if Path(exe).resolve() != local.resolve():
        return exe, None
    env = dict(os.environ)
    lib = str(PEERS / "lib")
    env["LD_LIBRARY_PATH"] = lib + (os.pathsep + env["LD_LIBRARY_PATH"]
                                    if env.get("LD_LIBRARY_PATH") else "")
    return exe, env


def ipcress_products(out: str, pairs) -> set:
    """{(record, pair, forward primer, reverse primer, start, end)}: 1-based inclusive."""
    length = {}
    for name, f, r in pairs:
        length[(name, "A")] = len(f)
        length[(name, "B")] = len(r)
    found = set()
    for line in out.splitlines():
        if not line.startswith("ipcress:"):
            continue
        f = line.split()
        record = f[1].rsplit(":filter(", 1)[0]
        exp, p1, pos1, p2, pos2 = f[2], f[4], int(f[5]), f[7], int(f[8])
        start, end = pos1 + 1, pos2 + length[(exp, p2)]
        found.add((record, exp, f"{exp}.{'F' if p1 == 'A' else 'R'}",
                   f"{exp}.{'F' if p2 == 'A' else 'R'}", start, end))
    return found


@lru_cache(maxsize=None)
def ipcress(w: Workload, copies: int | None = None) -> tuple[float, set]:
    """(wall seconds, products) of ipcress on the first ``copies`` records."""
    exe, env = ipcress_command()
    seconds, out = run([exe, "--input", str(folder(w) / "ipcress.txt"), "--sequence",
                        str(background(w, copies)), "--mismatch", str(w.mismatches), "--pretty",
                        "FALSE"], env)
    return seconds, ipcress_products(out, primer_pairs(w))


# --------------------------------------------------------------------------- primersearch
@lru_cache(maxsize=None)
def primersearch(w: Workload) -> tuple[float, int]:
    """(wall seconds, products within the product range)."""
    exe = shutil.which("primersearch")
    if exe is None:
        raise ImportError("primersearch is not installed (Debian package emboss)")
    out_file = folder(w) / "primersearch.out"
    percent = int(round(100 * w.mismatches / w.lengths[0]))
    seconds, _ = run([exe, "-seqall", str(background(w)), "-infile",
                      str(folder(w) / "primersearch.txt"), "-mismatchpercent", str(percent),
                      "-outfile", str(out_file), "-auto"])
    lengths = []
    for line in out_file.read_text().splitlines():
        line = line.strip()
        if line.startswith("Amplimer length:"):
            lengths.append(int(line.split()[2]))
    return seconds, sum(1 for n in lengths if w.product[0] <= n <= w.product[1])


# -------------------------------------------------------------------------- primerscope
def pcr_command(w: Workload, backend: str, *, threads: int | None = None, indels: bool = True,
                copies: int | None = None, as_json: bool = True) -> list[str]:
    """``primerscope pcr`` on the workload: the 3' rule off (up to ``mismatches`` edits in
    the window), the workload's product range; JSON out (with the run's own ``seconds``
    and every site), or the default CSV of the products."""
    cmd = [sys.executable, "-m", "engine.cli", "pcr", str(folder(w) / "primers.csv"),
           str(background(w, copies)), "--max-edits", str(w.mismatches), "--max-3prime-edits",
           str(w.mismatches), "--min-product", str(w.product[0]), "--max-product",
           str(w.product[1]), "--backend", backend, "--no-progress"]
    if as_json:
        cmd.append("--json")
    if threads:
        cmd += ["--threads", str(threads)]
    if not indels:
        cmd.append("--no-indels")
    return cmd


def primerscope(cmd) -> tuple[float, float | None, set]:
    """(wall seconds, the run's own ``seconds`` (JSON only, else None), products) of one
    ``primerscope pcr`` run."""
    seconds, out = run(cmd)
    if "--json" in cmd:
        payload = json.loads(out)
        rows, solve_s = payload["products"], payload["seconds"]
    else:
        rows, solve_s = csv.DictReader(io.StringIO(out)), None
    found = {(p["record"], p["forward"].split(".")[0], p["forward"], p["reverse"],
              int(p["start"]), int(p["end"])) for p in rows}
    return seconds, solve_s, found


def same_amplicon(theirs, ours, slack: int) -> bool:
    """The same record, primers and amplicon. With indels, a site with mismatches may be
    reported by an alignment with fewer edits whose ends shift by up to the edits."""
    return (theirs[:4] == ours[:4] and abs(theirs[4] - ours[4]) <= slack
            and abs(theirs[5] - ours[5]) <= slack)


def compare(theirs: set, ours: set, indels: bool, slack: int, records=None) -> dict:
    """Metrics of ours against ipcress's: ``superset_of_ipcress`` (indels: the same
    amplicons up to ``slack``) or ``equal_to_ipcress`` (mismatch-only: the same
    coordinates), on our products within a pair (in ``records`` only, when given),
    and ``ipcress_missing``."""
    same_pair = {p for p in ours if p[2].split(".")[0] == p[3].split(".")[0]
                 and (records is None or p[0] in records)}
    if indels:
        by_key: dict = {}
        for o in same_pair:
            by_key.setdefault(o[:4], []).append(o)
        missing = [t for t in theirs
                   if not any(same_amplicon(t, o, slack) for o in by_key.get(t[:4], ()))]
        return {"superset_of_ipcress": not missing, "ipcress_missing": len(missing)}
    return {"equal_to_ipcress": theirs == same_pair, "ipcress_missing": len(theirs - same_pair)}
