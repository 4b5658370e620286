"""Columnar results (issue #16): kmismatch hits, edit hits and kdiff candidates are numpy
columns with rows made when read; they behave as the tuples of row objects they replace,
the writers stream from them, and ``to_pandas()`` gives the same table."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from engine import columns, edit, kdiff, kmismatch
from engine.columns import ColumnTable
from engine.sequences import Record, encode, load


def _tables(text_names, pattern_names) -> dict:
    """kmismatch hits, edit hits and kdiff candidates of three random texts and four
    patterns taken from them, with these record and pattern names."""
    rng = np.random.default_rng(7)
    letters = np.array(list("ACGT"))
    texts = ["".join(rng.choice(letters, n)) for n in (900, 400, 50)]
    text = [Record(name, encode(t)) for name, t in zip(text_names, texts)]
    patterns = [Record(name, encode(p)) for name, p in
                zip(pattern_names, (texts[0][100:110], texts[1][7:15], "ACGTAC", texts[0][500:512]))]
    return {
        "kmismatch": kmismatch.solve(patterns, text, 3, backend="serial").hits,
        "edit": edit.solve(patterns, text, mode="search", k=2, strands="both",
                           backend="serial").hits,
        "kdiff": kdiff.solve(text[:2], text[2:], 3, backend="serial").candidates,
    }


@pytest.fixture(scope="module")
def results():
    return _tables([f"t{i}" for i in range(3)], [f"p{i}" for i in range(4)])


@pytest.mark.parametrize("family", ["kmismatch", "edit", "kdiff"])
def test_a_table_is_the_sequence_of_rows(results, family, monkeypatch):
    table = results[family]
    assert isinstance(table, ColumnTable) and len(table) > 20
    rows = list(table)
    assert len(rows) == len(table)
    assert table == tuple(rows) and table == rows and table != rows[:-1]
    assert table[0] == rows[0] and table[-1] == rows[-1] and table[len(rows) // 2] == rows[len(rows) // 2]
    with pytest.raises(IndexError):
        table[len(rows)]
    assert list(table[3:9]) == rows[3:9] and list(table[::5]) == rows[::5]
    picked = np.array([4, 1, 7])
    assert list(table[picked]) == [rows[i] for i in picked.tolist()]
    # Rows are made a block at a time: blocks of 7 rows give the same rows and cells.
    cells = list(table.tuples())
    monkeypatch.setattr(columns, "BLOCK", 7)
    assert list(table) == rows and list(table.tuples()) == cells
    assert list(table.tuples(5, 19)) == cells[5:19]
    assert table == table.take(np.arange(len(table)))


def _csv_from_objects(family, table) -> str:
    """The CSV as the writers made it from row objects before the columns."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(table.COLUMNS)
    blank = lambda v: "" if v is None else v  # noqa: E731
    for r in table:
        if family == "kmismatch":
            w.writerow((r.pattern_id, r.record_id, r.start, r.end, r.strand, r.mismatches, r.matched))
        elif family == "edit":
            w.writerow((r.pattern_id, r.record_id, blank(r.start), r.end, r.strand, r.distance,
                        blank(r.cigar), blank(r.matched)))
        else:
            w.writerow((r.target_id, r.start, r.end, r.length, r.sequence))
    return buf.getvalue()


@pytest.mark.parametrize("family", ["kmismatch", "edit", "kdiff"])
def test_the_csv_streams_from_the_columns(results, family, monkeypatch):
    import importlib

    table = results[family]
    # kdiff's writers sit in the primer layer (they annotate primers): engine.primers.export_kdiff
    export = importlib.import_module({"kdiff": "engine.primers.export_kdiff"}.get(
        family, f"engine.{family}.export"))
    monkeypatch.setattr(columns, "BLOCK", 5)
    result = type("R", (), {"hits": table, "candidates": table, "mode": "search", "k": 2,
                            "strands": "both"})()
    buf = io.StringIO(newline="")
    export.write_csv(result, buf)
    assert buf.getvalue() == _csv_from_objects(family, table)


def test_edit_hits_without_alignments_have_empty_cells():
    res = edit.solve(load("ACGT"), load("TTACGATT"), mode="search", k=1, align=False,
                     strands="forward", backend="serial")
    assert [(h.start, h.end, h.cigar, h.matched) for h in res.hits] == [
        (None, 5, None, None), (None, 6, None, None), (None, 7, None, None)]
    from engine.edit import export

    buf = io.StringIO(newline="")
    export.write_csv(res, buf)
    assert buf.getvalue().splitlines()[1] == "literal,literal,,5,+,1,,"
    assert export.to_json(res)["hits"] == [[None, 5, 1], [None, 6, 1], [None, 7, 1]]


def test_empty_tables():
    res = kdiff.solve(load("ACGT"), load("ACGTACGT"), 1, backend="serial")
    assert len(res.candidates) == 0 and res.candidates == () and not res.candidates
    assert list(res.candidates.tuples()) == []
    res = edit.solve(load("ACGT"), load("TTTTTTTT"), mode="search", k=0, backend="serial")
    assert res.hits == () and res.best is None


@pytest.mark.parametrize("family", ["kmismatch", "edit", "kdiff"])
def test_to_pandas(results, family):
    pd = pytest.importorskip("pandas")
    table = results[family]
    frame = table.to_pandas()
    assert list(frame.columns) == list(table.COLUMNS) and len(frame) == len(table)
    cells = list(table.tuples())
    for i in (0, len(cells) // 3, len(cells) - 1):
        got = tuple("" if pd.isna(v) else v for v in frame.iloc[i].tolist())
        assert got == cells[i]


def test_results_to_pandas():
    pytest.importorskip("pandas")
    text, patterns = load("ACGTTGCAACGTACGTTT"), load("ACGT")
    res = kmismatch.solve(patterns, text, 1, backend="serial")
    frame = res.to_pandas()
    assert len(frame) == len(res.hits) > 2
    assert frame["start"].tolist() == res.hits.start.tolist()
    assert frame["strand"].tolist() == [h.strand for h in res.hits]
    frame = kdiff.solve(load("ACTG"), load("AGCAAG"), 2, strands="forward",
                        backend="serial").to_pandas()
    assert frame[["start", "end", "sequence"]].values.tolist() == [[1, 3, "ACT"], [2, 4, "CTG"]]
    frame = edit.solve(load("TAGAC"), load("ATCGAG"), backend="serial").to_pandas()
    assert frame["distance"].tolist() == [3]
    frame = edit.solve(load("ACGT"), load("TTACGATT"), mode="search", k=1, strands="forward",
                       backend="serial").to_pandas()
    assert frame["cigar"].tolist() == ["3=1I", "3=1X", "3=1D1="]


def test_regions_keep_the_loaded_records_coordinates():
    """A region of a record (Record.offset) reports positions as the whole record would,
    and the columns read the right text for sequences and matched."""
    rng = np.random.default_rng(11)
    full = Record("chr", encode("".join(rng.choice(list("ACGT"), 3000))))
    part = full.region(1001, 2000)
    pats = [Record("p", full.codes[1500:1512].copy())]
    whole = kmismatch.solve(pats, [full], 2, backend="serial").hits
    sub = kmismatch.solve(pats, [part], 2, backend="serial").hits
    assert list(sub) == [h for h in whole if 1001 <= h.start and h.end <= 2000]
    whole = edit.solve(pats, [full], mode="search", k=2, strands="both", backend="serial").hits
    sub = edit.solve(pats, [part], mode="search", k=2, strands="both", backend="serial").hits
    assert len(sub) and list(sub) == [h for h in whole if 1001 <= h.start and h.end <= 2000]
    assert list(sub.tuples()) == [c for c in whole.tuples() if 1001 <= c[2] and c[3] <= 2000]
    bg = [Record("bg", encode("".join(rng.choice(list("ACGT"), 800))))]
    cands = kdiff.solve([part], bg, 3, backend="serial").candidates
    assert cands[0].start == 1001 and all(
        c.sequence == full.text[c.start - 1:c.end] for c in cands)
    assert cands.find(cands[5]) == 5 and cands[7] in cands


def test_ids_are_made_when_read():
    from engine.columns import Ids

    numbered = columns.Ids.numbered("read", 4)
    assert len(numbered) == 4 and numbered[3] == "read3" and numbered[-1] == "read3"
    assert list(numbered) == ["read0", "read1", "read2", "read3"] and numbered.unique
    with pytest.raises(IndexError):
        numbered[4]
    by_number = Ids.numbered("read", 3, numbers=[5, 5, 2])
    assert by_number.labels(np.array([2, 0])) == ["read2", "read5"] and not by_number.unique
    assert list(by_number.take([2, 1])) == ["read2", "read5"] and list(by_number[1:]) == ["read5", "read2"]
    named = Ids(["a", "b", "a"])
    assert columns.labels(named, np.array([1, 0])) == ["b", "a"] and not named.unique
    assert named == ["a", "b", "a"] and named == Ids(("a", "b", "a")) and named != by_number


#: Record ids a FASTA header may give that a spreadsheet would run as formulas.
FORMULAS = ('=HYPERLINK("x")', "-1+2", "@SUM(A1)")


@pytest.fixture(scope="module")
def formula_results():
    """The tables of :func:`results`, over records and patterns named like formulas."""
    return _tables(FORMULAS, [FORMULAS[i % 3] for i in range(4)])


@pytest.mark.parametrize("family", ["kmismatch", "edit", "kdiff"])
def test_a_table_for_a_spreadsheet_escapes_its_ids(results, formula_results, family):
    table = formula_results[family]
    rows = list(table.tuples())
    cells = list(table.for_spreadsheet().tuples())
    ids = {i for i, name in enumerate(table.COLUMNS) if name.endswith("_id")}
    assert len(cells) == len(rows) > 20 and ids
    for row, out in zip(rows, cells):
        assert out == tuple("'" + v if i in ids else v for i, v in enumerate(row))
    assert {out[i] for out in cells for i in ids} <= {"'" + f for f in FORMULAS}
    if "strand" in table.COLUMNS:  # a fixed word: a '-' strand is no formula
        strands = {out[table.COLUMNS.index("strand")] for out in cells}
        assert strands == {"+", "-"}
    assert list(table.tuples()) == rows  # the table itself is left as it was
    assert results[family].for_spreadsheet() is results[family]  # no id to escape: no copy


def test_spreadsheet_ids():
    from engine.columns import Ids, spreadsheet_ids

    names = ("chr1", "=cmd", "+x")
    assert spreadsheet_ids(names) == ("chr1", "'=cmd", "'+x")
    assert spreadsheet_ids(Ids(names)) == ["chr1", "'=cmd", "'+x"]
    plain = Ids(("a", "b"))
    assert spreadsheet_ids(plain) is plain
    numbered = Ids.numbered("-read", 3, numbers=[4, 2, 9])
    assert list(spreadsheet_ids(numbered)) == ["'-read4", "'-read2", "'-read9"]
    reads = Ids.numbered("read", 200_000)
    assert spreadsheet_ids(reads) is reads  # (a prefix and digits: the prefix decides)


def test_edit_hits_over_numbered_ids():
    """A batch's hits name queries and regions by Ids made when rows are read: rows, the CSV
    and to_pandas (categorical ids) as with ids given as strings."""
    from engine.edit import export
    from engine.sequences import SeqColumns

    reads = SeqColumns.encode(["ACGTTGCA", "TTTTCCCC", "GGGGAAAA"], ids="read")
    regions = SeqColumns.encode(["GGACGTAGCATT", "CCCCCCCC", "TTGGGGAAAATT"], ids="cand")
    res = edit.verify(reads, regions, 2, backend="serial")
    hits = res.hits
    assert isinstance(hits.pattern_ids, columns.Ids) and isinstance(hits.record_ids, columns.Ids)
    assert [(h.pattern_id, h.record_id, h.start, h.end, h.distance) for h in hits] == [
        ("read0", "cand0", 3, 10, 1), ("read2", "cand2", 3, 10, 0)]
    buf = io.StringIO(newline="")
    export.write_csv(res, buf)
    assert buf.getvalue().splitlines()[2] == "read2,cand2,3,10,+,0,8=,GGGGAAAA"
    assert export.to_json(res)["details"][0] == ["read0", "cand0", "+", "4=1X3="]
    pd = pytest.importorskip("pandas")
    frame = hits.to_pandas()
    assert frame["record_id"].tolist() == ["cand0", "cand2"]
    assert isinstance(frame["pattern_id"].dtype, pd.CategoricalDtype)
