"""In-silico PCR equals a brute-force product finder (edlib sites on both strands, pairs by
position) on real DNA with planted products."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from engine.jobs import drive
from engine.primers import pcr
from engine.primers.primer_sets import load_primers
from engine.sequences import Record, encode
from tests.engine.primers import brute
from tests.engine.primers.brute import rc


def _mutate_at(seq: str, pos: int) -> str:
    """A substitution at ``pos`` (a base that differs)."""
    return seq[:pos] + {"A": "C", "C": "G", "G": "T", "T": "A"}[seq[pos]] + seq[pos + 1:]


class Scene:
    """Primers from lambda, planted in E. coli filler: two records, products on both
    strands, a 3'-window mismatch, an indel, an IUPAC primer, a product of a chosen length,
    and a pair split across the record boundary."""

    def __init__(self, lam: str, eco: str):
        self.primers = {
            "F1": lam[1000:1021], "R1": rc(lam[1500:1521]), "F2": lam[3000:3020],
            "R2": rc(lam[3700:3722]),
        }
        iu = list(lam[5000:5021])
        concrete = "".join(iu)
        for pos, code in ((3, "N"), (9, "R" if iu[9] in "AG" else "Y"), (14, "S" if iu[14] in "CG" else "W")):
            iu[pos] = code
        self.primers["IU"] = "".join(iu)
        filler = iter(range(200_000, 4_000_000, 37_001))

        def fill(n):
            at = next(filler)
            return eco[at:at + n]

        p = self.primers
        parts = [
            fill(300), p["F1"], fill(400), _mutate_at(rc(p["R1"]), 10),   # F1 -> R1, R1 with 1 edit
            fill(250), _mutate_at(p["F2"], 17), fill(300), rc(p["R1"]),    # F2 with a 3' mismatch
            fill(200), p["R1"], fill(350), rc(p["F1"][:8] + p["F1"][9:]),  # minus-strand product,
            fill(300), concrete, fill(280), rc(p["R2"]),                   # F1 with a deletion; IUPAC
            fill(500), p["F2"], fill(757), rc(p["R2"]),                    # product of 800 exactly
            fill(400), p["F2"], fill(60),                                  # F2 near the record end
        ]
        self.rec_a = "".join(parts)
        self.rec_b = fill(40) + rc(p["R2"]) + fill(700)                   # its partner: record B
        self.records = {"A": self.rec_a, "B": self.rec_b}
        at = self.rec_a.rfind(p["F2"], 0, len(self.rec_a) - 100)
        self.exact_length = self.rec_a.find(rc(p["R2"]), at) + len(p["R2"]) - at
        self.split_start = self.rec_a.rfind(p["F2"]) + 1

    def primer_records(self):
        return [Record(n, encode(s)) for n, s in self.primers.items()]

    def background(self):
        return [Record(n, encode(s)) for n, s in self.records.items()]


@pytest.fixture(scope="module")
def scene(lambda_record, ecoli_record):
    return Scene(lambda_record.text, ecoli_record.text)


@lru_cache(maxsize=None)
def _brute(scene, k, max3, window, lo, hi, indels):
    return brute.products(scene.primers, scene.records, k, max3, window, lo, hi, indels)


def _rows(result):
    return {(p.forward, p.reverse, p.record_id, p.start, p.end, p.forward_edits, p.reverse_edits,
             p.forward_3prime_edits, p.reverse_3prime_edits) for p in result.products}


CASES = [  # (k, max 3' edits, window, min product, max product, indels)
    (3, 0, 5, 1, 3000, True),
    (3, 1, 5, 1, 3000, True),
    (2, 0, 8, 1, 3000, True),
    (3, 0, 5, 1, 3000, False),
    (1, 0, 5, 200, 1200, False),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_products_equal_brute_force(scene, case):
    k, max3, window, lo, hi, indels = case
    settings_ = pcr.PcrSettings(k, max3, window, hi, lo, indels)
    res = pcr.solve(scene.primer_records(), scene.background(), settings_, backend="serial")
    assert res.info.complete
    want = _brute(scene, *case)
    assert _rows(res) == want
    assert len(res.products) == len(_rows(res))  # no duplicates


def test_planted_cases_are_there(scene):
    """The scene does what it says: both strands, 3' mismatch excluded then admitted,
    the indel and IUPAC sites, nothing across the records."""
    res = pcr.solve(scene.primer_records(), scene.background(), backend="serial")
    pairs = {(p.forward, p.reverse) for p in res.products}
    assert ("F1", "R1") in pairs and ("R1", "F1") in pairs and ("IU", "R2") in pairs
    assert ("F2", "R1") not in pairs  # F2's only site there has a 3'-window mismatch
    loose = pcr.solve(scene.primer_records(), scene.background(),
                      pcr.PcrSettings(max_3prime_edits=1), backend="serial")
    assert ("F2", "R1") in {(p.forward, p.reverse) for p in loose.products}
    assert any(s.primer == "F1" and s.strand == "-" and s.edits == 1 for s in res.sites)
    assert all(p.record_id == "A" for p in res.products)  # record B has no + site
    assert not any(p.start == scene.split_start for p in res.products)
    assert {s.record_id for s in res.sites if s.primer == "R2"} == {"A", "B"}


@pytest.mark.parametrize("backend,variant", [("multicore", None), ("serial", "dp"),
                                             ("multicore", "myers-blocked"), ("serial", "banded")])
def test_every_variant_gives_the_same_products(scene, backend, variant):
    base = pcr.solve(scene.primer_records(), scene.background(), backend="serial")
    other = pcr.solve(scene.primer_records(), scene.background(), backend=backend, variant=variant)
    assert other.products == base.products and other.sites == base.sites


def test_product_exactly_at_max_product(scene):
    L = scene.exact_length
    for hi, present in ((L, True), (L - 1, False)):
        res = pcr.solve(scene.primer_records(), scene.background(), pcr.PcrSettings(max_product=hi),
                        backend="serial")
        assert any(p.length == L and (p.forward, p.reverse) == ("F2", "R2")
                   for p in res.products) is present
        assert all(p.length <= hi for p in res.products)


def test_sequences_and_coordinates(scene):
    res = pcr.solve(scene.primer_records(), scene.background(), pcr.PcrSettings(with_sequence=True),
                    backend="serial")
    for p in res.products:
        text = scene.records[p.record_id]
        assert p.sequence == text[p.start - 1:p.end] and p.length == len(p.sequence)


def test_sites_and_products_are_columns_in_order(scene):
    """Rows come by record, start, end and the primers' names; a pair's own PCR (pairs.py's
    ``primers=``) is the whole set's products between those primers; a row reads back."""
    settings_ = pcr.PcrSettings(max_3prime_edits=1)
    background = scene.background()
    res = pcr.solve(scene.primer_records(), background, settings_, backend="serial")
    assert isinstance(res.sites, pcr.PcrSites) and isinstance(res.products, pcr.PcrProducts)
    rows = list(res.products)
    index = {r.id: i for i, r in enumerate(background)}
    assert len(rows) > 3 and rows == sorted(
        rows, key=lambda p: (index[p.record_id], p.start, p.end, p.forward, p.reverse))
    sites = list(res.sites)
    assert sites == sorted(sites, key=lambda s: (index[s.record_id], s.start, s.strand == "-",
                                                 list(scene.primers).index(s.primer)))
    for names in ({"F1", "R1"}, {"F2", "R2", "IU"}, {"R1"}):
        own = pcr.pair_sites(res.sites, background, settings_, primers=names)
        assert list(own) == [p for p in rows if {p.forward, p.reverse} <= names]
    assert res.products[2] == rows[2] and res.products.index(rows[2]) == 2
    # Site objects made by hand pair the same as the table they came from.
    assert pcr.pair_sites(sites, background, settings_) == res.products


def random_scene(seed: int, n_records: int = 2):
    """Short random records dense with mutated copies of short random primers (both strands)."""
    rng = np.random.default_rng(seed)
    acgt = np.array(list("ACGT"))
    primers = {f"P{i}": "".join(rng.choice(acgt, int(rng.integers(6, 11)))) for i in range(2)}
    records = {}
    for r in range(n_records):
        parts = []
        for _ in range(6):
            parts.append("".join(rng.choice(acgt, int(rng.integers(0, 12)))))
            q = list(primers[f"P{int(rng.integers(0, 2))}"])
            if rng.random() < 0.5:
                q = list(rc("".join(q)))
            for _ in range(int(rng.integers(0, 3))):
                op, at = int(rng.integers(3)), int(rng.integers(0, len(q)))
                if op == 0:
                    q[at] = str(rng.choice(acgt))
                elif op == 1:
                    q.insert(at, str(rng.choice(acgt)))
                elif len(q) > 1:
                    del q[at]
            parts.append("".join(q))
        records[f"r{r}"] = "".join(parts)
    return primers, records


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2), st.integers(0, 2), st.integers(1, 6),
       st.booleans(), st.integers(10, 150))
@example(1, 2, 2, 3, True, 150)      # clusters whose ends tie on edits but not on 3' edits
@example(9, 2, 2, 3, True, 150)
def test_random_scenes_equal_brute_force(seed, k, max3, window, indels, hi):
    primers, records = random_scene(seed)
    k = min(k, min(len(p) for p in primers.values()) - 1)
    settings_ = pcr.PcrSettings(k, max3, window, hi, 1, indels)
    res = pcr.solve([Record(n, encode(s)) for n, s in primers.items()],
                    [Record(n, encode(s)) for n, s in records.items()], settings_, backend="serial")
    assert _rows(res) == brute.products(primers, records, k, max3, window, 1, hi, indels)


def test_facing_rule():
    """+ starts at or before -, and ends at or before it; lengths inclusive; one record."""
    def site(primer, strand, start, end, record="r"):
        return pcr.Site(primer, record, strand, start, end, 0, 0)

    bg = [Record("r", encode("A" * 400)), Record("q", encode("A" * 400))]
    a = site("F", "+", 100, 120)
    cases = {
        site("R", "-", 100, 120): True,     # the same span: both 3' ends inside it
        site("R", "-", 105, 118): False,    # ends before the + site does
        site("R", "-", 99, 200): False,     # starts before the + site
        site("R", "-", 180, 200): True,
        site("R", "-", 180, 200, "q"): False,  # another record
    }
    s = pcr.PcrSettings(max_product=101, min_product=1)
    for b, present in cases.items():
        assert bool(pcr.pair_sites([a, b], bg, s)) is present, b
    assert pcr.pair_sites([a, site("R", "-", 181, 201)], bg, s) == []   # 102 > max
    same = site("R", "-", 100, 120)                                       # 21 long
    assert pcr.pair_sites([a, same], bg, pcr.PcrSettings(min_product=21))
    assert pcr.pair_sites([a, same], bg, pcr.PcrSettings(min_product=22)) == []


def test_one_row_per_product_when_two_alignments_share_its_ends():
    """Two alignments of one binding site with the same start and edits (an indel at the
    primer's 3' end moves only its site's end) make one product, not two equal rows."""
    bg = [Record("r", encode("A" * 400))]
    f1, f2 = pcr.Site("F", "r", "+", 100, 120, 2, 0), pcr.Site("F", "r", "+", 100, 121, 2, 0)
    worse = pcr.Site("F", "r", "+", 100, 119, 3, 1)
    r = pcr.Site("R", "r", "-", 180, 200, 1, 0)
    products = pcr.pair_sites([f1, f2, worse, r], bg, pcr.PcrSettings(min_product=1))
    assert [(p.start, p.end, p.forward_edits, p.forward_3prime_edits) for p in products] == \
        [(100, 200, 2, 0), (100, 200, 3, 1)]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True,
                          text=True, timeout=600)


def test_cli_json_contract_and_inputs(scene, tmp_path):
    bg = tmp_path / "bg.fa"
    bg.write_text("".join(f">{n}\n{s}\n" for n, s in scene.records.items()))
    table = tmp_path / "primers.tsv"
    table.write_text("name\tsequence\n" + "".join(f"{n}\t{s}\n" for n, s in scene.primers.items()))
    fasta = tmp_path / "primers.fa"
    fasta.write_text("".join(f">{n}\n{s}\n" for n, s in scene.primers.items()))
    outs = []
    for source in (str(table), str(fasta),
                   ",".join(f"{n}={s}" for n, s in scene.primers.items())):
        done = _cli("pcr", source, str(bg), "--json", "--with-sequence", "--backend", "serial")
        assert done.returncode == 0, done.stderr
        outs.append(json.loads(done.stdout))
    assert outs[0]["products"] == outs[1]["products"] == outs[2]["products"]
    payload = outs[0]
    assert payload["family"] == "pcr" and payload["complete"]
    keys = {"forward", "reverse", "record", "start", "end", "length", "forward_edits",
            "reverse_edits", "sequence"}
    assert payload["products"] and all(keys <= set(p) for p in payload["products"])
    expected = _brute(scene, 3, 0, 5, 1, 3000, True)
    assert {(p["forward"], p["reverse"], p["record"], p["start"], p["end"])
            for p in payload["products"]} == {row[:5] for row in expected}
    csv_out = _cli("pcr", str(table), str(bg), "--backend", "serial", "--no-indels")
    assert csv_out.returncode == 0
    assert csv_out.stdout.splitlines()[0].startswith("forward,reverse,record,start,end,length")


@pytest.mark.parametrize("args,message", [
    (["", "ACGT"], "empty primer"),
    (["ACGTACGT,,ACGTAC", "ACGT"], "is empty"),
    (["A" * 101, "ACGT"], "at most 100"),
    (["ACGTACGTAC", "ACGT", "--min-product", "500", "--max-product", "100"],
     "max_product (100) is smaller than min_product (500)"),
    (["ACGTACGTAC", "ACGT", "--max-product", "0"], "max_product must be >= 1, got 0"),
    (["ACGT", "ACGTACGT", "--max-edits", "4"], "smaller than the shortest primer"),
])
def test_bad_input_exits_2_with_one_line(args, message):
    done = _cli("pcr", *args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def _bad_settings():
    """One below each PcrSettings number's minimum and one above its maximum (the registry's)."""
    for p in pcr.SETTINGS_PARAMS:
        yield p, int(p.minimum) - 1
        yield p, int(p.maximum) + 1


@pytest.mark.parametrize("param,value", list(_bad_settings()),
                         ids=lambda v: getattr(v, "name", str(v)))
def test_a_bad_setting_reads_the_same_from_the_cli_and_the_api(param, value, capsys):
    """Issue #29's rule for the tools: ``pcr --max-edits -1`` said "argument --max-edits:
    must be >= 0 and <= 100, got -1", the API "max_edits must be an integer >= 0, got -1"
    (off-target) or "max_edits must be >= 0, got -1" (PcrSettings). One check now."""
    from engine.cli import main
    from engine.primers import offtarget

    with pytest.raises(ValueError) as refused:
        pcr.PcrSettings(**{param.name: value})
    message = str(refused.value)
    bound = param.minimum if value < param.minimum else param.maximum
    assert message == f"{param.name} must be {'>=' if value < bound else '<='} {int(bound)}, " \
                      f"got {value}"
    commands = ["pcr", "check", "panel"] + (["offtarget"] if param is pcr.MAX_EDITS else [])
    for command in commands:
        assert main([command, "ACGTACGTACGT", "ACGTACGTACGTACGTAAAA", param.flag, str(value),
                     "--no-progress"]) == 2
        assert capsys.readouterr().err.strip() == f"primerscope: error: {message}", command
    if param is pcr.MAX_EDITS:
        with pytest.raises(ValueError, match=f"^{message}$"):
            offtarget.make_job("ACGTACGTACGT", "ACGTACGTACGTACGTAAAA", value)


def test_primer_table_errors(tmp_path):
    bad = tmp_path / "p.csv"
    bad.write_text("name,sequence\nA,ACGT\nB,\n")
    with pytest.raises(Exception, match="empty"):
        load_primers(str(bad))
    dup = tmp_path / "d.csv"
    dup.write_text("A,ACGTAC\nA,GGCATT\n")
    with pytest.raises(ValueError, match="two primers are named"):
        load_primers(str(dup))


def test_cancel_keeps_what_was_found(scene):
    from engine.jobs import CancelToken

    job = pcr.make_job(scene.primer_records(), scene.background(), backend="serial")
    cancel = CancelToken()
    gen = pcr.iter_solve(job, cancel)
    cancel.cancel()
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            res = stop.value
            break
    assert not res.info.complete


def _solve_text(primers: dict, records: dict, settings_):
    return pcr.solve([Record(n, encode(s)) for n, s in primers.items()],
                     [Record(n, encode(s)) for n, s in records.items()], settings_,
                     backend="serial")


def test_a_microsatellite_gives_every_binding_position():
    """(CA)x10 binds (CA)x20 at 11 places: 11 products with indels as without (issue 28),
    where overlapping alignments used to be chained into one."""
    primers = {"F": "CA" * 10, "R": "GGACTTGCAATCGATGCC"}
    records = {"bg": "GGATCCTTAAGGCTTACG" + "CA" * 20
                     + "GATTCAGGCTAGCTTGACCTGAGGCATCGATTGCAAGTCC"}
    for indels in (True, False):
        res = _solve_text(primers, records, pcr.PcrSettings(0, indels=indels))
        assert len(res.products) == 11
        assert sorted(p.start for p in res.products) == list(range(19, 41, 2))


def tandem_scene(seed: int):
    """Primers planted around a microsatellite (unit of 1-6 nt): F overlaps the repeat, R lies
    downstream; two records carry copies with more or fewer units and substitutions."""
    rng = np.random.default_rng(seed)
    acgt = np.array(list("ACGT"))

    def rand(n):
        return "".join(rng.choice(acgt, n))

    unit = rand(int(rng.integers(1, 7)))
    units = max(2, int(rng.integers(12, 36)) // len(unit))
    left, mid, right = rand(int(rng.integers(8, 20))), rand(int(rng.integers(30, 60))), rand(12)
    plan = left + unit * units
    size = int(rng.integers(10, 16))
    at = int(rng.integers(max(0, len(left) - size + 2), len(plan) - size + 1))
    r_at = int(rng.integers(0, len(mid) - size))
    primers = {"F": plan[at:at + size], "R": rc(mid[r_at:r_at + size])}
    records = {}
    for r in range(2):
        copy = list(left + unit * max(1, units + int(rng.integers(-2, 3))) + mid + right)
        for _ in range(int(rng.integers(0, 3))):
            copy[int(rng.integers(len(copy)))] = str(rng.choice(acgt))
        records[f"r{r}"] = "".join(copy)
    return primers, records


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2))
@example(7, 1)
def test_tandem_repeats_are_a_superset_of_ipcress(seed, k):
    """With indels, pcr's products include every product of the mismatch-only model
    (ipcress's rules: brute.hamming_sites) at the same coordinates, with no more edits;
    and they are the README's (brute.indel_sites). ipcress has no 3' rule: max3 = k."""
    primers, records = tandem_scene(seed)
    window, hi = 5, 3000
    res = _solve_text(primers, records, pcr.PcrSettings(k, k, window, hi, 1))
    got = _rows(res)
    assert got == brute.products(primers, records, k, k, window, 1, hi, True)
    ours = {row[:5]: row[5:7] for row in got}
    for row in brute.products(primers, records, k, k, window, 1, hi, False):
        assert row[:5] in ours, row
        assert ours[row[:5]][0] <= row[5] and ours[row[:5]][1] <= row[6]


def _with_gaps(records: dict, seed: int, gap_min: int) -> dict:
    """The records with 1-3 runs of at least ``gap_min`` N put in at random places."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, text in records.items():
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(0, len(text) + 1))
            text = text[:at] + "N" * int(rng.integers(gap_min, gap_min + 15)) + text[at:]
        out[name] = text
    return out


def _pieces(records: dict, gap_min: int) -> dict:
    """name -> (record name, offset, text) of the pieces between the assembly gaps."""
    from engine.gaps import split_at_gaps

    cut = split_at_gaps([Record(n, encode(s)) for n, s in records.items()], gap_min)
    return {f"{p.id}#{i}": (p.id, p.offset, p.text) for i, p in enumerate(cut)}


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2), st.booleans())
@example(3, 2, True)
def test_gaps_are_record_breaks_and_products_across_them_are_flagged(seed, k, indels):
    """A background with assembly gaps gives the sites of its pieces between the gaps as
    separate records (brute force on the pieces); products within a piece are the pieces'
    products, and those whose sites lie in two pieces of one record have ``spans_gap``."""
    primers, records = random_scene(seed)
    gap_min = 10
    records = _with_gaps(records, seed, gap_min)
    k = min(k, min(len(p) for p in primers.values()) - 1)
    window, hi = 5, 400
    res = _solve_text(primers, records, pcr.PcrSettings(k, k, window, hi, 1, indels))
    pieces = _pieces(records, gap_min)
    found = brute.sites(primers, {n: text for n, (_, _, text) in pieces.items()}, k, k, window,
                        indels)
    want_sites = {(p, pieces[piece][0], strand, s + pieces[piece][1], e + pieces[piece][1], d, e3)
                  for (p, piece, strand), rows in found.items() for s, e, d, e3 in rows}
    assert {(s.primer, s.record_id, s.strand, s.start, s.end, s.edits, s.edits_3prime)
            for s in res.sites} == want_sites
    plus = [(s, piece) for s, piece in _tagged(found, pieces, "+")]
    minus = [(s, piece) for s, piece in _tagged(found, pieces, "-")]
    want = {(a[0], b[0], a[1], a[3], b[4], a[5], b[5], a[6], b[6], pa != pb)
            for a, pa in plus for b, pb in minus
            if a[1] == b[1] and a[3] <= b[3] and a[4] <= b[4] and 1 <= b[4] - a[3] + 1 <= hi}
    assert {(p.forward, p.reverse, p.record_id, p.start, p.end, p.forward_edits, p.reverse_edits,
             p.forward_3prime_edits, p.reverse_3prime_edits, p.spans_gap)
            for p in res.products} == want


def _tagged(found, pieces, strand):
    """(site row (primer, record, strand, start, end, d, e3), piece) of one strand."""
    for (p, piece, s), rows in found.items():
        if s == strand:
            record, offset, _ = pieces[piece]
            for a, b, d, e3 in rows:
                yield (p, record, s, a + offset, b + offset, d, e3), piece


def test_a_2kb_gap_in_a_template_gives_no_products_from_inside_it(tmp_path):
    """Issue 28: a 2 kb N run used to bind every primer (7.9 million products, 6.7 GB). As an
    assembly gap it holds no site; the one product across it is reported with spans_gap,
    in the CSV and JSON too; with --gap-min above the run, N matches everything again."""
    rng = np.random.default_rng(5)
    acgt = np.array(list("ACGT"))

    def rand(n):
        return "".join(rng.choice(acgt, n))

    primers = {"F": rand(20), "R": rand(20)}
    text = rand(300) + primers["F"] + rand(200) + "N" * 2000 + rand(150) + rc(primers["R"]) \
        + rand(300) + primers["F"] + rand(100) + rc(primers["R"]) + rand(50)
    res = _solve_text(primers, {"chr": text}, pcr.PcrSettings(max_product=2500))
    gap = (text.index("N") + 1, text.rindex("N") + 1)
    assert not any(gap[0] <= s.end and s.start <= gap[1] for s in res.sites)
    assert [(p.start, p.end, p.spans_gap) for p in res.products] == [
        (301, text.index(rc(primers["R"])) + 20, True),
        (text.rindex(primers["F"]) + 1, text.rindex(rc(primers["R"])) + 20, False)]
    fasta = tmp_path / "t.fa"
    fasta.write_text(f">chr\n{text}\n")
    literal = ",".join(f"{n}={s}" for n, s in primers.items())
    done = _cli("pcr", literal, str(fasta), "--backend", "serial", "--max-product", "2500")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split(",")[-1] == "spans_gap" and len(lines) == 3
    assert lines[1].endswith(",True") and lines[2].endswith(",False")
    done = _cli("pcr", literal, str(fasta), "--backend", "serial", "--max-product", "2500",
                "--json")
    assert [p["spans_gap"] for p in json.loads(done.stdout)["products"]] == [True, False]
    wild = _solve_text({"F": primers["F"]}, {"chr": "N" * 2000},
                       pcr.PcrSettings(max_product=60))
    assert len(wild.products) == 0
    loose = drive(pcr.iter_solve(pcr.make_job([Record("F", encode(primers["F"]))],
                                      [Record("chr", encode("N" * 200))],
                                      pcr.PcrSettings(max_product=60), backend="serial",
                                      gap_min=1000)))
    assert len(loose.products) > 1000


def test_a_product_across_a_gap_counts_in_a_panel():
    """A panel's cross-products include one whose sites lie on both sides of a gap, flagged:
    specificity counts it as it counts any product."""
    from engine.primers import panel

    rng = np.random.default_rng(8)
    acgt = np.array(list("ACGT"))

    def rand(n):
        return "".join(rng.choice(acgt, n))

    f, r = rand(20), rand(20)
    bg = [Record("chr", encode(rand(100) + f + rand(50) + "N" * 300 + rand(50) + rc(r) + rand(80)))]
    res = panel.solve([Record("F", encode(f)), Record("R", encode(r))], bg)
    found = res.products_between("F", "R")
    assert [(p.start, p.length, p.spans_gap) for p in found] == [(101, 440, True)]


def _gap_edge_cases(seed: int):
    """(primers, records) with gap runs next to primer sites, moved by 3 bases at a time."""
    rng = np.random.default_rng(seed)
    acgt = np.array(list("ACGT"))

    def rand(n):
        return "".join(rng.choice(acgt, n))

    primers = {"F": rand(18), "R": rand(18)}
    for shift in range(0, 40, 3):
        yield primers, {
            "b": rand(30 + shift) + primers["F"] + "N" * 12 + rand(3) + primers["F"][3:]
            + rand(40) + rc(primers["R"])[:-2] + "N" * 25 + rc(primers["R"]) + rand(20)}


@pytest.mark.parametrize("indels", [True, False])
def test_gaps_across_the_streamed_chunk_edges(monkeypatch, indels):
    """Gap runs next to primer sites, the streamed path's chunk edges moved across them: the
    same sites and products (spans_gap included) as the background held whole."""
    from engine import config

    settings_ = pcr.PcrSettings(2, 1, 5, 400, 1, indels, with_sequence=True)
    for primers, records in _gap_edge_cases(23):
        want = _solve_text(primers, records, settings_)
        monkeypatch.setattr(config, "STREAM_MEMORY_BASES", 0)
        monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 48)
        got = _solve_text(primers, records, settings_)
        monkeypatch.undo()
        assert got.sites == want.sites and got.products == want.products
        assert any(p.spans_gap for p in want.products)


def test_gaps_across_the_dask_chunk_edges(dask_cluster, monkeypatch):
    """The same on the dask backend: chunks refined on the workers stop at gaps, and the
    client's sites and products (spans_gap included) are those of one process."""
    from engine import config

    settings_ = pcr.PcrSettings(2, 1, 5, 400, 1, True)
    for primers, records in list(_gap_edge_cases(29))[::2]:
        want = _solve_text(primers, records, settings_)
        monkeypatch.setattr(config, "STREAM_CHUNK_BASES", 48)
        monkeypatch.setattr(config, "STREAM_OVERLAP_RATIO", 1)
        got = pcr.solve([Record(n, encode(s)) for n, s in primers.items()],
                        [Record(n, encode(s)) for n, s in records.items()], settings_,
                        backend="dask", scheduler=dask_cluster[0])
        monkeypatch.undo()
        assert got.info.backend == "dask" and got.info.complete
        assert got.sites == want.sites and got.products == want.products
        assert any(p.spans_gap for p in want.products)
