"""Primer annotations (primer3-py), filters, merging and their CLI options."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import primer3
import pytest

from engine import kdiff
from engine.primers.export_kdiff import write_bed
from engine.primers import Conditions, Filters, annotate, annotate_many, merge_candidates, passes
from engine.primers.annotate import Annotation
from engine.sequences import decode, encode, load, reverse_complement


@pytest.fixture(scope="module")
def real_candidates(lambda_record, ecoli_record):
    res = kdiff.solve([lambda_record.slice(0, 2000)], [ecoli_record.slice(0, 200_000)], 5,
                      variant="bitparallel", backend="serial")
    assert len(res.candidates) > 1000
    return res.candidates


@pytest.mark.parametrize("conditions", [Conditions(), Conditions(mv_conc=100, dv_conc=3.0,
                                                                 dntp_conc=0.8, dna_conc=250)])
def test_annotations_equal_primer3(real_candidates, conditions):
    salts = dict(mv_conc=conditions.mv_conc, dv_conc=conditions.dv_conc,
                 dntp_conc=conditions.dntp_conc, dna_conc=conditions.dna_conc)
    for c in real_candidates[::97]:
        a = annotate(c.sequence, conditions)
        assert a.tm == primer3.calc_tm(c.sequence, **salts)
        hp = primer3.calc_hairpin(c.sequence, **salts)
        hd = primer3.calc_homodimer(c.sequence, **salts)
        assert (a.hairpin_dg, a.hairpin_tm) == (hp.dg / 1000, hp.tm)
        assert (a.homodimer_dg, a.homodimer_tm) == (hd.dg / 1000, hd.tm)
        tail = c.sequence[-5:]
        end = primer3.calc_end_stability(tail, decode(reverse_complement(encode(tail))), **salts)
        assert a.end_stability_dg == end.dg / 1000
        assert a.length == c.length
        assert a.gc_percent == pytest.approx(100 * sum(ch in "GC" for ch in c.sequence) / c.length)


def test_gc_clamp_run_and_ambiguity_codes():
    a = annotate("AAAAAATTTGCGCG")
    assert a.max_run == 6 and a.gc_clamp == 5
    amb = annotate("ACGTNACGTACGTAGCTAGC")
    assert amb.tm is None and amb.hairpin_dg is None and amb.gc_percent == pytest.approx(50.0)


def _plain_filter(a: Annotation, f: Filters) -> bool:
    checks = [
        (a.length, f.len_min, f.len_max), (a.tm, f.tm_min, f.tm_max),
        (a.gc_percent, f.gc_min, f.gc_max), (a.max_run, None, f.max_poly_x),
        (a.gc_clamp, f.min_gc_clamp, None), (a.hairpin_tm, None, f.max_hairpin_tm),
        (a.homodimer_tm, None, f.max_homodimer_tm),
    ]
    for value, lo, hi in checks:
        if lo is not None and (value is None or value < lo):
            return False
        if hi is not None and (value is None or value > hi):
            return False
    if f.max_end_stability is not None and -a.end_stability_dg > f.max_end_stability:
        return False
    return True


@pytest.mark.parametrize("flt", [
    Filters(), Filters(tm_min=None, tm_max=None), Filters.off(),
    Filters(len_min=20, len_max=24, gc_min=40, gc_max=60, max_poly_x=3, min_gc_clamp=1,
            max_hairpin_tm=45, max_homodimer_tm=40, max_end_stability=9),
])
def test_filters_never_drop_a_passing_candidate(real_candidates, flt):
    notes = annotate_many([c.sequence for c in real_candidates])
    got = [passes(a, flt) for a in notes]
    assert got == [_plain_filter(a, flt) for a in notes]
    if flt == Filters.off():
        assert all(got)
    assert 0 < sum(got) <= len(got)


@pytest.mark.parametrize("kwargs,message", [
    ({"mv_conc": -1}, "mv_conc must not be negative"),
    ({"dna_conc": 0}, "must be > 0"),
])
def test_bad_conditions(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Conditions(**kwargs)


def test_bad_filter_window():
    with pytest.raises(ValueError, match="tm_min \\(65\\) is greater than tm_max \\(60\\)"):
        Filters(tm_min=65, tm_max=60)


def test_merge_regions_and_bed(real_candidates):
    regions = merge_candidates(real_candidates)
    assert sum(r.count for r in regions) == len(real_candidates)
    for r in regions:
        inside = [c for c in real_candidates if r.start <= c.start and c.end <= r.end]
        assert len(inside) == r.count
        assert r.best.length == min(c.length for c in inside)
    for a, b in zip(regions, regions[1:]):
        assert a.end < b.start or a.target_id != b.target_id
    buf = io.StringIO()
    write_bed(regions, buf)
    first = buf.getvalue().splitlines()[1].split("\t")
    assert int(first[1]) == regions[0].start - 1 and int(first[2]) == regions[0].end


def test_export_writers_take_typed_options(real_candidates):
    from types import SimpleNamespace

    from engine.primers import export_kdiff as export

    result = SimpleNamespace(candidates=real_candidates[:300], k=5, strands="both")
    rows = list(csv.reader(io.StringIO(export.csv_text(result))))
    assert rows[0] == list(export.CSV_COLUMNS)
    assert rows[1:] == [[str(x) for x in export.candidate_row(c)] for c in result.candidates]
    flt = Filters(tm_min=None, tm_max=None)
    kept = [c for c, a in zip(result.candidates, annotate_many([c.sequence for c in result.candidates]))
            if passes(a, flt)]
    assert 0 < len(kept) < len(result.candidates)
    rows = list(csv.reader(io.StringIO(export.csv_text(result, filters=flt))))
    assert rows[0][5:] == list(Annotation.COLUMNS)  # a filter shows what it filtered on
    assert [r[:3] for r in rows[1:]] == [[c.target_id, str(c.start), str(c.end)] for c in kept]
    assert export.csv_text(result, filters=flt, merge=True) == export.regions_csv_text(kept)
    assert export.result_bed_text(result, filters=flt) == export.bed_text(kept)
    js = export.to_json(result, filters=flt, merge=True)
    assert js["candidates"] == [[c.target_id, c.start, c.end] for c in kept]
    assert len(js["annotations"]) == len(kept) and len(js["regions"]) == len(merge_candidates(kept))
    assert "annotations" not in export.to_json(result)


#: Target ids a FASTA header may give that a spreadsheet would run as formulas.
FORMULAS = ('=HYPERLINK("x")', "-1+2", "@SUM(A1)")


def test_kdiff_csvs_defuse_formula_target_ids():
    """Every kdiff CSV (candidates from the columns or with annotations, regions, the --all-k
    landscape) writes a target id a spreadsheet would run with a leading quote; the other
    cells as they were, and the id reads back unchanged."""
    import numpy as np

    from engine.primers import export_kdiff as export
    from engine.sequences import Record
    from engine.spreadsheet import unquoted_cell

    rng = np.random.default_rng(5)
    dna = lambda n: "".join(rng.choice(list("ACGT"), n))  # noqa: E731
    targets = [Record(name, encode(dna(60))) for name in FORMULAS]
    background = [Record("bg", encode(dna(3000)))]
    res = kdiff.solve(targets, background, 3, backend="serial")
    cands = res.candidates
    assert {c.target_id for c in cands} == set(FORMULAS)

    def rows(text):
        table = list(csv.reader(io.StringIO(text)))
        assert all(row[0].startswith("'") for row in table[1:]), table[:3]
        assert {unquoted_cell(row[0]) for row in table[1:]} == set(FORMULAS)
        return table

    def plain(row):
        return [str(v) for v in row]

    table = rows(export.csv_text(res))  # from the columns
    assert table[1:] == [["'" + c.target_id] + plain(export.candidate_row(c))[1:] for c in cands]
    buf = io.StringIO(newline="")
    export.write_candidates_csv(list(cands), buf)  # from row objects
    assert rows(buf.getvalue()) == table
    few = cands[::max(1, len(cands) // 6)]
    buf = io.StringIO(newline="")
    export.write_candidates_csv(few, buf, annotate_many([c.sequence for c in few]))
    assert [r[:5] for r in rows(buf.getvalue())[1:]] == [
        ["'" + c.target_id] + plain(export.candidate_row(c))[1:] for c in few]
    regions = merge_candidates(cands)
    assert rows(export.regions_csv_text(cands))[1:] == [
        ["'" + r.target_id] + plain(export.region_row(r))[1:] for r in regions]
    land = kdiff.solve(targets, background, 3, backend="serial", all_k=True)
    table = rows(export.csv_text(land))
    assert table[0][:2] == ["target_id", "start"] and len(table) == len(land.landscape) + 1
    assert table[1:] == [["'" + row[0]] + ["" if v is None else str(v) for v in row[1:]]
                         for row in land.landscape.rows()]
    assert export.to_json(res)["candidates"][0][0] in FORMULAS  # JSON keeps the ids raw


def test_known_annotations_are_used_and_the_missing_ones_made(real_candidates, monkeypatch):
    """select_candidates(known=...): the window's annotations are the writer's, read, not made
    again; a sequence missing from them is annotated as without them."""
    from dataclasses import replace

    from engine.primers.filters import select_candidates

    cands = real_candidates[:40]
    made = annotate_many([c.sequence for c in cands])
    # marked copies: a known annotation that came back from Primer3 would not carry the mark
    known = {c.sequence: replace(a, note="known") for c, a in zip(cands, made)}
    missing = cands[3].sequence
    del known[missing]
    calls = []
    monkeypatch.setattr("engine.primers.filters.annotate_many",
                        lambda seqs, cond=None: calls.append(list(seqs)) or made[3:4])
    kept, notes = select_candidates(cands, annotate=True, known=known)
    assert kept == list(cands) and calls == [[missing]]
    assert notes[3] == made[3] and all(n.note == "known" for i, n in enumerate(notes) if i != 3)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", *map(str, args)],
                          capture_output=True, text=True)


def test_cli_annotate_filter_merge(tmp_path, demo_dir, ecoli_record):
    target = tmp_path / "t.fa"
    target.write_text(">lam\n" + open(demo_dir / "lambda_NC_001416.fa").read().split("\n", 1)[1]
                      .replace("\n", "")[:1500] + "\n")
    bg = tmp_path / "b.fa"
    bg.write_text(">bg\n" + ecoli_record.slice(0, 100_000).text + "\n")
    done = run_cli("kdiff", target, bg, "-k", "5", "--annotate", "--filter", "--tm-min", "off")
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert rows[0][:5] == ["target_id", "start", "end", "length", "sequence"]
    assert rows[0][5:] == list(Annotation.COLUMNS)
    assert rows[1:] and all(18 <= int(r[3]) <= 27 for r in rows[1:])
    assert all(float(r[6]) <= 63 for r in rows[1:])
    # The same rows as the engine's candidates that the filter keeps, annotated as primer3 says.
    t_rec, b_rec = load(target), load(bg)
    cands = kdiff.solve(t_rec, b_rec, 5).candidates
    kept = [c for c in cands if passes(annotate(c.sequence), Filters(tm_min=None))]
    assert [r[:5] for r in rows[1:]] == [[c.target_id, str(c.start), str(c.end), str(c.length),
                                          c.sequence] for c in kept]
    tm_col = 5 + Annotation.COLUMNS.index("tm")
    for r in rows[1::max(1, len(rows) // 7)]:
        assert float(r[tm_col]) == pytest.approx(primer3.calc_tm(r[4], **Conditions().salts()), abs=0.01)
    bed = tmp_path / "r.bed"
    merged = run_cli("kdiff", target, bg, "-k", "4", "--merge", "--bed", bed, "--json")
    payload = json.loads(merged.stdout)
    regions = merge_candidates(kdiff.solve(t_rec, b_rec, 4).candidates)
    assert regions and payload["regions"] == [[r.target_id, r.start, r.end, r.count, r.best.start,
                                               r.best.end] for r in regions]
    bed_lines = bed.read_text().splitlines()
    assert bed_lines[0].startswith("track") and len(bed_lines) == 1 + len(regions)
    assert [line.split("\t")[:3] for line in bed_lines[1:]] == [
        [r.target_id, str(r.start - 1), str(r.end)] for r in regions]


@pytest.mark.parametrize("args,message", [
    (["--mv-conc", "-5"], "--mv-conc: must be >= 0"),
    (["--tm-min", "65", "--tm-max", "60"], "tm_min (65) is greater than tm_max (60)"),
    (["--gc-min", "lots"], "expected a number or 'off'"),
])
def test_cli_bad_conditions_exit_2(args, message):
    done = run_cli("kdiff", "ACGTACGTAAGT", "ACGGT", "-k", "2", *args)
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
