"""Group-specific primers (issue #30) against an independent brute-force oracle (edlib).

The genomes are small and made here: random flanks of each genome's own, and a planted
locus (LP, a middle of each genome's own, RP) that every inclusion genome carries, so the
conserved windows are LP and RP only and Primer3 reads a few hundred bases.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys

import edlib
import numpy as np
import pytest

from engine.jobs import CancelToken, drive
from engine.primers import group as G
from engine.primers.pairs import PairSettings
from engine.primers.primer3_design import DesignSettings, check_pair, primer_lists
from engine.sequences import Record, encode

BASES = np.array(list("ACGT"))
COMP = str.maketrans("ACGT", "TGCA")
LP_LEN, MID_LEN, RP_LEN, FLANK = 34, 70, 34, 200
#: a substitution here breaks every primer of 18+ nt inside LP
LP_SNP = 17
SIZE = (100, 200)


def rc(s: str) -> str:
    return s.translate(COMP)[::-1]


def rand(rng, n: int) -> str:
    return "".join(rng.choice(BASES, n))


def sub(s: str, positions) -> str:
    out = list(s)
    for p in positions:
        out[p] = {"A": "C", "C": "G", "G": "T", "T": "A"}[out[p]]
    return "".join(out)


class Case:
    """Inclusion genomes ``strain1..n`` holding the planted locus, one exclusion genome."""

    def __init__(self, n=3, *, snp_in=None, deleted_in=None, split_in=None, reverse_in=None,
                 exclusion_lp_edits=None, seed=7):
        rng = np.random.default_rng(seed)
        self.lp, self.rp = rand(rng, LP_LEN), rand(rng, RP_LEN)
        self.include = []
        for i in range(n):
            lp = sub(self.lp, [LP_SNP]) if i == snp_in else self.lp
            locus = lp + rand(rng, MID_LEN) + self.rp
            if i == reverse_in:
                locus = rc(locus)
            left, right = rand(rng, FLANK), rand(rng, FLANK)
            if i == deleted_in:
                texts = [left + right]
            elif i == split_in:
                cut = LP_LEN + MID_LEN // 2
                texts = [left + locus[:cut], locus[cut:] + right]
            else:
                texts = [left + locus + right]
            recs = tuple(Record(f"s{i + 1}_c{j + 1}", encode(t)) for j, t in enumerate(texts))
            self.include.append(G.Genome(f"strain{i + 1}", recs))
        background = rand(rng, 1500)
        if exclusion_lp_edits is not None:
            copy = sub(self.lp, exclusion_lp_edits)
            background = background[:700] + copy + background[700:]
        self.exclude = [G.Genome("other", (Record("other", encode(background)),))]

    def texts(self, genome):
        return [r.text for r in genome.records]


def settings(**kw) -> G.GroupSettings:
    # pairs may share primers (no 3' distance rule): the result is then the strict best
    # num_return pairs by penalty, which the oracle can check
    design = DesignSettings(min_three_prime_distance=-1)
    kw.setdefault("product_size", SIZE)
    kw.setdefault("num_return", 5)
    return G.GroupSettings(pairs=PairSettings(design=design), **kw)


def run(case, k=3, **kw):
    return G.group(case.include, case.exclude, k, settings(**kw), backend="serial")


# -- the oracle -------------------------------------------------------------------------------

def edits_ending(query: str, text: str, end: int, j: int):
    """Fewest edits of ``query`` aligned to a text stretch ending at ``end`` (exclusive),
    with the 5' end free; None above j."""
    if not query:
        return 0
    window = text[max(0, end - len(query) - j):end][::-1]
    r = edlib.align(query[::-1], window, mode="SHW", task="distance", k=j)
    return None if r["editDistance"] == -1 else r["editDistance"]


def plus_sites(primer: str, text: str, j: int, n3: int):
    """0-based (start, end) of every site of ``primer`` read along ``text``: its 3'-most n3
    bases exact and ending at ``end``, the rest within j edits before them (start: the
    primer's length back from the end, as the planted cases have no indels)."""
    tail, head = primer[len(primer) - n3:], primer[:len(primer) - n3]
    out = []
    for e in range(len(tail) - 1, len(text)):
        if text[e - len(tail) + 1:e + 1] != tail:
            continue
        d = edits_ending(head, text, e - len(tail) + 1, j)
        if d is not None:
            out.append((e - len(primer) + 1, e, d))
    return out


@functools.lru_cache(maxsize=None)
def sites_in(primer: str, text: str, j: int, n3: int):
    """(+ site starts, - site ends) of ``primer`` on ``text``, 0-based forward coordinates."""
    plus = [s for s, _e, _d in plus_sites(primer, text, j, n3)]
    minus = [len(text) - 1 - s for s, _e, _d in plus_sites(primer, rc(text), j, n3)]
    return plus, minus


def oracle_products(left: str, right: str, genome, j: int, n3: int, size) -> bool:
    """Does the pair amplify this genome: facing sites on one record, size in range?"""
    for text in (r.text for r in genome.records):
        for a, b in ((left, right), (right, left)):
            starts, _ = sites_in(a, text, j, n3)
            _, ends = sites_in(b, text, j, n3)
            if any(e >= s and size[0] <= e - s + 1 <= size[1] for s in starts for e in ends):
                return True
    return False


@functools.lru_cache(maxsize=None)
def _excluded(primer: str, texts: tuple, k: int) -> bool:
    return any(edlib.align(q, t, mode="HW", task="distance", k=k - 1)["editDistance"] != -1
               for t in texts for q in (primer, rc(primer)))


def excluded(primer: str, genomes, k: int) -> bool:
    """Is the primer within k-1 edits of some exclusion substring, either strand?"""
    return _excluded(primer, tuple(r.text for g in genomes for r in g.records), k)


def oracle(case, k, s: G.GroupSettings, ref=0):
    """Every candidate pair Primer3 proposes on the reference's locus window, judged by the
    definition: {(left seq, left start, right seq, right end): penalty} of the valid ones
    whose primers' penalty sum reaches ``limit`` or less (lower bound of the pair penalty)."""
    ref_text = case.include[ref].records[0].text
    lo = ref_text.find(case.lp) if case.lp in ref_text else ref_text.find(sub(case.lp, [LP_SNP]))
    lo = max(0, lo - 30)
    hi = min(len(ref_text), lo + 30 + LP_LEN + MID_LEN + RP_LEN + 30)
    design = s.pairs.design
    lefts, rights, _ = primer_lists(ref_text[lo:hi], design)
    n = len(case.include)
    need = int(np.ceil(s.min_coverage * n - 1e-9))
    good_left = {o.sequence for o in lefts if not excluded(o.sequence, case.exclude, k)}
    good_right = {o.sequence for o in rights if not excluded(o.sequence, case.exclude, k)}
    valid = []
    for le in lefts:
        for ri in rights:
            size = ri.pos - le.pos + 1
            if not SIZE[0] <= size <= SIZE[1] or le.sequence not in good_left \
                    or ri.sequence not in good_right:
                continue
            cover = sum(oracle_products(le.sequence, ri.sequence, g, s.include_edits,
                                        s.include_3prime_exact, s.product_size)
                        for g in case.include)
            if cover >= need:
                valid.append((le.penalty + ri.penalty, le, ri, cover))
    valid.sort(key=lambda t: t[0])
    return ref_text[lo:hi], lo, valid


def check_against_oracle(case, k, s, result):
    template, lo, valid = oracle(case, k, s)
    reported = {(p.left.sequence, p.left.start, p.right.sequence, p.right.end): p
                for p in result.pairs}
    for p in result.pairs:   # every reported pair passes the definition
        assert not excluded(p.left.sequence, case.exclude, k)
        assert not excluded(p.right.sequence, case.exclude, k)
        cover = [oracle_products(p.left.sequence, p.right.sequence, g, s.include_edits,
                                 s.include_3prime_exact, s.product_size) for g in case.include]
        assert [q is not None for q in p.products] == cover
        assert p.coverage >= s.min_coverage - 1e-9
    worst = max((p.penalty for p in result.pairs), default=np.inf)
    full = len(result.pairs) == s.num_return
    for bound, le, ri, _cover in valid:   # no better valid pair is missing
        if full and bound > worst:
            break
        check = check_pair(template, le, ri, s.product_size, s.pairs.design)
        if not check.ok or (full and check.penalty >= worst - 1e-9):
            continue
        key = (le.sequence, lo + le.pos + 1, ri.sequence, lo + ri.pos + 1)
        assert key in reported, f"missing pair {key} penalty {check.penalty} (worst {worst})"
    return valid


# -- the tests -------------------------------------------------------------------------------

def test_reported_pairs_pass_the_oracle_and_none_better_is_missing():
    # a copy of LP 3 edits away: primers holding two of its edits are within k-1 = 2
    case = Case(3, snp_in=1, exclusion_lp_edits=[5, 16, 28])
    s = settings(num_return=5)
    result = run(case, k=3, num_return=5)
    assert result.complete and result.pairs
    assert check_against_oracle(case, 3, s, result)
    assert any("within 2 edits of an exclusion genome (other" in line for line in result.diagnosis)
    # every pair in reference coordinates, with a product in each strain
    for p in result.pairs:
        ref = case.include[0].records[0].text
        assert ref[p.left.start - 1:p.left.end] == p.left.sequence
        assert rc(ref[p.right.start - 1:p.right.end]) == p.right.sequence


def test_one_mismatch_found_at_j1_lost_at_j0():
    case = Case(3, snp_in=2)
    with_j = run(case, include_edits=1)
    assert with_j.pairs and all(p.coverage == 1.0 for p in with_j.pairs)
    assert any(p.products[2].left_edits == 1 for p in with_j.pairs)
    without = run(case, include_edits=0)
    assert without.complete and not without.pairs
    # the exact-k-mer shortlist says which strain breaks the stretches: strain3 most of all
    line = next(line for line in without.diagnosis if line.startswith("J=0"))
    lacking = {name: int(c.replace(",", "")) for name, c in
               re.findall(r"(strain\d+) ([\d,]+)", line.split("lacking them:")[1])}
    assert max(lacking, key=lacking.get) == "strain3", line


def test_locus_in_an_exclusion_genome_within_k_minus_1_is_rejected():
    # three substitutions in the copy of LP, one in every 16-mer of it: no exact shared seed,
    # so only the verification can reject it
    edits = [8, 16, 24]
    found = run(Case(3, exclusion_lp_edits=edits), k=3)   # 3 edits away: k=3 holds
    assert found.pairs
    rejected = run(Case(3, exclusion_lp_edits=edits), k=4)  # within k-1 = 3: rejected
    assert rejected.complete and not rejected.pairs
    assert any("within 3 edits" in line and "other" in line for line in rejected.diagnosis)


def test_deleted_locus_gives_coverage_n_minus_1_over_n():
    case = Case(10, deleted_in=4)
    at_09 = run(case, min_coverage=0.9, num_return=2)
    assert at_09.pairs
    assert all(p.coverage == pytest.approx(0.9) and p.products[4] is None for p in at_09.pairs)
    assert not run(case, min_coverage=1.0, num_return=2).pairs


def test_a_product_split_across_two_contigs_does_not_count():
    case = Case(3, split_in=1, reverse_in=2)
    result = run(case, min_coverage=0.6, num_return=2)
    assert result.pairs
    for p in result.pairs:
        assert p.products[1] is None          # the two halves of the locus are two records
        assert p.products[2] is not None      # the reversed locus still gives a product
        assert p.coverage == pytest.approx(2 / 3)


def test_cancel_keeps_the_pairs_verified_so_far():
    case = Case(3)
    job = G.make_job(case.include, case.exclude, 3, settings(num_return=3), backend="serial")
    cancel = CancelToken()
    gen = G.iter_solve(job, cancel)
    seen = []
    while True:
        try:
            p = next(gen)
        except StopIteration as stop:
            result = stop.value
            break
        seen.append(p.message)
        if "exclusivity" in p.message:
            cancel.cancel()
    assert not result.complete and not result.info.complete
    full = run(case, num_return=3)
    assert set(result.pairs) <= set(full.pairs)   # only pairs verified before the cancel


def test_tiles_ranked_by_exclusion_seeds_read_a_round_at_a_time(monkeypatch):
    # two planted loci; the first 17 bases of the second's LP also in the exclusion genome
    # (shared 16-mers, yet most of its primers stay 3+ edits away): that tile ranks last.
    # With rounds of one tile, the second is read only when the first gives too few pairs:
    # at J=0 the first locus's SNP in strain2 leaves it none.
    one, two = Case(3, seed=7, snp_in=1), Case(3, seed=8)
    include = [G.Genome(a.name, (Record(a.name, encode(a.records[0].text + b.records[0].text)),))
               for a, b in zip(one.include, two.include)]
    exclude = [G.Genome("other", (Record("other", encode(
        one.exclude[0].records[0].text + two.lp[:17] + two.exclude[0].records[0].text)),))]
    monkeypatch.setattr(G, "ROUND_BASES", 1)
    first_len = len(one.include[0].records[0].text)
    tolerant = G.group(include, exclude, 3, settings(num_return=2), backend="serial")
    assert len(tolerant.pairs) == 2 and all(p.right.end <= first_len for p in tolerant.pairs)
    assert any("(1 of 2 rounds)" in line for line in tolerant.diagnosis)
    exact = G.group(include, exclude, 3, settings(num_return=2, include_edits=0),
                    backend="serial")
    assert any("(2 of 2 rounds)" in line for line in exact.diagnosis)
    assert exact.pairs and all(p.left.start > first_len for p in exact.pairs)
    for p in tolerant.pairs + exact.pairs:   # every pair verified, whichever round
        assert not excluded(p.left.sequence, exclude, 3)
        assert not excluded(p.right.sequence, exclude, 3)


def test_engine_iter_solve_and_to_pandas():
    import engine
    import engine.primers

    case = Case(3)
    job = G.make_job(case.include, case.exclude, 3, settings(num_return=2), backend="serial")
    result = drive(engine.iter_solve(job))
    frame = result.to_pandas()
    assert len(frame) == len(result.pairs) > 0
    assert list(frame["strain2_size"]) == [p.products[1].size for p in result.pairs]
    bed = result.to_pandas("bed")
    assert list(bed.columns[:3]) == ["chrom", "start", "end"]
    assert list(bed["start"]) == [p.left.start - 1 for p in result.pairs]
    assert list(bed["end"]) == [p.right.end for p in result.pairs]
    assert result.conservation[case.include[0].records[0].id].max() == pytest.approx(1.0)
    again = engine.primers.group(case.include, case.exclude, 3, settings(num_return=2),
                                 backend="serial")   # the callable module: the same answer
    assert again.pairs == result.pairs
    # ``seconds`` times the whole search (compiled by now), not only its kernels
    assert again.info.seconds >= sum(again.stage_seconds.values())


def write_fasta(path, genome):
    path.write_text("".join(f">{r.id}\n{r.text}\n" for r in genome.records))
    return str(path)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", "group", *args],
                          capture_output=True, text=True)


def test_cli_json_shape(tmp_path):
    case = Case(3)
    inc = [write_fasta(tmp_path / f"{g.name}.fa", g) for g in case.include]
    exc = write_fasta(tmp_path / "other.fa", case.exclude[0])
    out = cli("--include", *inc, "--exclude", exc, "-k", "3", "--product-size", "100-200",
              "--num-return", "2", "--min-3prime-distance", "off", "--backend", "serial",
              "--json", "--bed", str(tmp_path / "p.bed"))
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["family"] == "group" and payload["genomes"] == ["strain1", "strain2", "strain3"]
    pair = payload["pairs"][0]
    assert set(pair["left"]) >= {"sequence", "start", "end"} and pair["coverage"] == 1.0
    assert set(pair["products"][1]) == {"genome", "record", "start", "end", "size",
                                        "left_edits", "right_edits"}
    assert (tmp_path / "p.bed").read_text().count("\n") == len(payload["pairs"])


@pytest.mark.parametrize("args, message", [
    (["--include", "A.fa", "--exclude", "B.fa", "-k", "3"], "A.fa: no such file"),
    (["--include", "{a}", "--exclude", "{b}", "-k", "3"], "at least two inclusion genomes"),
    (["--include", "{a}", "{a}", "--exclude", "{b}", "-k", "3"], "appears twice"),
    (["--include", "{a}", "{c}", "--exclude", "{b}", "-k", "3", "--reference", "zz"],
     "is not an inclusion genome"),
    (["--include", "{a}", "{c}", "--exclude", "{b}", "-k", "3", "--product-size", "1-2 3-4"],
     "takes one range"),
    (["--include", "{a}", "{c}", "--exclude", "{b}", "-k", "3", "--min-coverage", "0"],
     "--min-coverage must be above 0"),
])
def test_cli_bad_input_one_line_exit_2(tmp_path, args, message):
    case = Case(2)
    paths = {"a": write_fasta(tmp_path / "a.fa", case.include[0]),
             "c": write_fasta(tmp_path / "c.fa", case.include[1]),
             "b": write_fasta(tmp_path / "b.fa", case.exclude[0])}
    out = cli(*[a.format(**paths) for a in args])
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr


_INTERRUPTED_RUN = """
import os, signal, sys
from engine import interrupts
from engine.primers import group as G

real = G.iter_solve

def iter_solve(job, cancel=None):  # Ctrl-C once some pairs are verified
    gen, sent = real(job, cancel), False
    while True:
        try:
            p = next(gen)
        except StopIteration as stop:
            return stop.value
        if not sent and p.partial is not None and p.partial.pairs:
            os.kill(os.getpid(), signal.SIGINT)
            sent = True
        yield p

G.iter_solve = iter_solve
G.ROUND_BASES = 1   # a round per tile: the first locus's pairs are verified before the second
from engine.cli import main
interrupts.install()
sys.exit(interrupts.leave(interrupts.guarded(lambda: main(sys.argv[1:]))))
"""


def test_cli_ctrl_c_writes_the_pairs_verified_so_far(tmp_path):
    # two loci, a round each; Primer3's 3' distance rule leaves a few pairs a locus, so the
    # first round's pairs are verified while the second round is still to come
    one, two = Case(3, seed=7), Case(3, seed=8)
    include = [G.Genome(a.name, (Record(a.name, encode(a.records[0].text + b.records[0].text)),))
               for a, b in zip(one.include, two.include)]
    inc = [write_fasta(tmp_path / f"{g.name}.fa", g) for g in include]
    exc = write_fasta(tmp_path / "other.fa", one.exclude[0])
    out_csv = tmp_path / "out.csv"
    out = subprocess.run([sys.executable, "-c", _INTERRUPTED_RUN, "group", "--include", *inc,
                          "--exclude", exc, "-k", "3", "--product-size", "100-200",
                          "--num-return", "1000", "--backend", "serial", "-o", str(out_csv)],
                         capture_output=True, text=True)
    assert out.returncode == 130, out.stderr
    lines = out_csv.read_text().splitlines()
    n = len(lines) - 1
    assert n >= 1 and lines[0].startswith("rank,")
    assert f"interrupted; wrote the {n} group pairs verified so far" in out.stderr
    first_len = len(one.include[0].records[0].text)
    rows = [line.split(",") for line in lines[1:]]
    assert all(int(row[11]) <= first_len for row in rows)   # the first round's pairs only
    for row in rows:   # each verified
        assert not excluded(row[5], one.exclude, 3) and not excluded(row[9], one.exclude, 3)


def test_cuda_backend_in_the_simulator():
    # the seeded filters on the CPU, and the GPU's edit searches where they cannot judge
    from pathlib import Path

    from tests.cuda_support import run_simulator_cases

    run_simulator_cases(Path(__file__).resolve().parent / "group_cuda_cases.py", "cuda")


def test_csv_defuses_formula_like_records_and_genomes():
    """A record id (FASTA header) or genome name a spreadsheet would run gets a leading
    quote in the CSV (CSV injection); the other cells stay, and the ids read back."""
    import csv
    import io
    from dataclasses import replace

    from engine.spreadsheet import unquoted_cell

    case = Case(3)
    result = G.group(case.include, case.exclude, 3, settings(num_return=2), backend="serial")
    assert result.pairs
    odd = replace(result, genomes=('=HYPERLINK("x")', "@SUM(A1)", "strain3"),
                  pairs=tuple(replace(p, record="-1+2") for p in result.pairs))

    def rows(res):
        buf = io.StringIO(newline="")
        G.write_csv(res, buf)
        return list(csv.reader(io.StringIO(buf.getvalue())))[1:]

    plain, got = rows(result), rows(odd)
    assert [r[1] for r in got] == ["'-1+2"] * len(result.pairs)
    assert all(r[13].startswith("'=HYPERLINK(\"x\"):") for r in got)
    assert all(unquoted_cell(r[13]).split(";")[1].startswith("@SUM(A1):") for r in got)
    assert [r[:1] + r[2:13] for r in got] == [r[:1] + r[2:13] for r in plain]
