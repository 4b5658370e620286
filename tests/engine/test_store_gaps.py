"""The genome store's gap and soft-mask tables (issue #28): round trips, .2bit, gapped views,
format-1 stores."""

from __future__ import annotations

import os
import tempfile
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import gaps, store
from engine.cli import main as cli_main
from engine.sequences import load, lower_runs, reverse_complement
from tests.engine.test_store import _write_2bit
from tests.strategies import examples

LETTERS = "ACGTACGTACGTRYKMSWBDHVN"


@st.composite
def genomes(draw, max_records=3):
    """FASTA records of mixed case: ACGT and IUPAC codes with runs of N of any length (some
    long enough to be gaps) and runs of lower case laid over them at random."""
    records = []
    for i in range(draw(st.integers(1, max_records))):
        parts = []
        for _ in range(draw(st.integers(1, 8))):
            if draw(st.booleans()):
                parts.append("N" * draw(st.integers(1, 40)))
            else:
                parts.append("".join(draw(st.lists(st.sampled_from(LETTERS), min_size=1,
                                                   max_size=40))))
        seq = list("".join(parts))
        for _ in range(draw(st.integers(0, 4))):
            lo = draw(st.integers(0, len(seq) - 1))
            hi = draw(st.integers(lo + 1, len(seq)))
            seq[lo:hi] = [c.lower() for c in seq[lo:hi]]
        records.append((f"r{i}", "".join(seq)))
    return records


def _fasta_text(records, width):
    return "".join(f">{rid} d{rid}\n" + "".join(seq[i:i + width] + "\n"
                                                 for i in range(0, len(seq), width))
                   for rid, seq in records)


def _runs_of(flags):
    edges = np.flatnonzero(np.diff(np.asarray(flags, dtype=np.int8), prepend=0, append=0))
    return edges[0::2].tolist(), edges[1::2].tolist()


def _pair(intervals):
    return ([], []) if intervals is None else tuple(np.asarray(a).tolist() for a in intervals)


@settings(max_examples=examples(60))
@given(genomes(), st.integers(1, 50), st.sampled_from([1, 3, 64, 1 << 23]),
       st.sampled_from([1, 2, 1 << 16]), st.integers(1, 30))
def test_round_trip_keeps_gaps_mask_and_iupac(records, width, block, rows, gap_min):
    """Codes (IUPAC included), every N run and every lower-case run come back exactly, with
    the source cut into blocks anywhere and the kernel's run tables filling at any row."""
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(store, "BUILD_BLOCK", block)
        mp.setattr(store._Writer, "RUN_ROWS", rows)
        path = os.path.join(tmp, "g.fa")
        with open(path, "w") as fh:
            fh.write(_fasta_text(records, width))
        out = os.path.join(tmp, "g.psg")
        store.build(path, out, gap_min=gap_min)
        stored, read = load(out), load(path)
        assert store.open_store(out).gap_min == gap_min
        for rec, ref, (rid, seq) in zip(stored, read, records):
            assert rec.id == rid and rec.text == seq.upper()
            assert np.array_equal(rec.codes, ref.codes)
            assert _pair(rec.n_runs()) == _runs_of([c in "Nn" for c in seq])
            assert _pair(rec.n_runs(gap_min)) == _pair(gaps.n_runs(ref.codes, gap_min))
            assert _pair(rec.soft_mask) == _runs_of([c.islower() for c in seq])
            assert _pair(rec.soft_mask) == _pair(ref.soft_mask) == _pair(lower_runs(seq))


@settings(max_examples=examples(60))
@given(genomes(max_records=2), st.integers(1, 25), st.data())
def test_gapped_view_reads_the_gap_code(records, gap_min, data):
    """Every read of ``with_gap_min`` (chunks, reverse chunks, scattered positions, the whole
    record) equals engine.gaps.mask_gaps of the codes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "g.fa")
        with open(path, "w") as fh:
            fh.write(_fasta_text(records, 60))
        out = os.path.join(tmp, "g.psg")
        store.build(path, out)
        for rec in load(out):
            view = rec.with_gap_min(gap_min)
            expected = gaps.mask_gaps(rec.codes, gap_min)
            assert np.array_equal(view.codes, expected)
            assert _pair(view.gap_runs()) == _pair(gaps.n_runs(rec.codes, gap_min))
            n = len(rec)
            lo = data.draw(st.integers(0, n - 1))
            hi = data.draw(st.integers(lo + 1, n))
            assert np.array_equal(view.chunk(lo, hi), expected[lo:hi])
            buf = np.full(hi - lo + 5, 99, dtype=np.uint8)
            view.read_into(lo, hi, True, buf, 3)
            assert np.array_equal(buf[3:3 + hi - lo], reverse_complement(expected[lo:hi]))
            assert buf[:3].tolist() == [99] * 3 and buf[-2:].tolist() == [99] * 2
            positions = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=20)),
                                 dtype=np.int64)
            assert np.array_equal(view.gather(positions), expected[positions])
            # the plain record is not gapped, and views of views take the new gap_min
            assert np.array_equal(rec.chunk(lo, hi), rec.codes[lo:hi])
            assert np.array_equal(view.with_gap_min(1).codes, gaps.mask_gaps(rec.codes, 1))
            assert gaps.as_background([rec], gap_min)[0].codes.tolist() == expected.tolist()


def test_view_pickles_by_path(tmp_path):
    import pickle

    path = tmp_path / "g.fa"
    path.write_text(">a\nACGT" + "N" * 12 + "ACGT\n")
    out = tmp_path / "g.psg"
    store.build(path, out)
    view = load(out)[0].with_gap_min(10)
    again = pickle.loads(pickle.dumps(view))
    assert type(again) is store.GappedStoreRecord and again.gap_min == 10
    assert again.codes.tolist() == view.codes.tolist() == [1, 2, 4, 8] + [0] * 12 + [1, 2, 4, 8]


TWOBIT_RECORDS = [("chrA", "NNNNNNNNNNNNacgtACGTNNNNggccaTTGAnnnnnnnnnnnnnnACGTAC" * 9 + "GCA"),
                  ("chrB", "NNNNNNNNNNNNNNN"), ("chrC", "g"), ("chrD", "ACGTNacgtn" * 31 + "TTTT")]


@pytest.mark.parametrize("reader", ["py2bit", "biopython"])
def test_twobit_store_equals_fasta_store(tmp_path, monkeypatch, reader):
    """A store built from .2bit holds the same codes, N runs and mask runs as one built from
    the FASTA of the same genome (N blocks and mask blocks kept), and the py2bit reader's own
    block lists agree with the tables."""
    if reader == "py2bit":
        py2bit = pytest.importorskip("py2bit")
    else:
        monkeypatch.setitem(__import__("sys").modules, "py2bit", None)
    two = tmp_path / "g.2bit"
    _write_2bit(two, TWOBIT_RECORDS)
    fa = tmp_path / "g.fa"
    fa.write_text(_fasta_text(TWOBIT_RECORDS, 60))
    from_two, from_fa = store.build(two, tmp_path / "a.psg"), store.build(fa, tmp_path / "b.psg")
    assert from_two.payload_sha256 == from_fa.payload_sha256
    a, b = load(tmp_path / "a.psg"), load(tmp_path / "b.psg")
    assert [r.id for r in a] == [r.id for r in b] == [i for i, _ in TWOBIT_RECORDS]
    for x, y, (_, seq) in zip(a, b, TWOBIT_RECORDS):
        assert np.array_equal(x.codes, y.codes)
        assert _pair(x.n_runs()) == _pair(y.n_runs()) == _runs_of([c in "Nn" for c in seq])
        assert _pair(x.soft_mask) == _pair(y.soft_mask) == _runs_of([c.islower() for c in seq])
    if reader == "py2bit":
        tb = py2bit.open(str(two), True)
        try:
            for x, (name, _) in zip(a, TWOBIT_RECORDS):
                hard = tb.hardMaskedBlocks(name) or []
                soft = tb.softMaskedBlocks(name) or []
                assert _pair(x.n_runs()) == ([s for s, _ in hard], [e for _, e in hard])
                assert _pair(x.soft_mask) == ([s for s, _ in soft], [e for _, e in soft])
        finally:
            tb.close()


def _as_format_1(path, out):
    """The same store written as format 1 (no interval section, two table columns)."""
    data = open(path, "rb").read()
    s = store.GenomeStore(path)
    n = s.n_records
    table = data[s.table_offset:s.table_offset + s.table_bytes]
    table = table[:16 * n] + table[32 * n:]
    file_bytes = s.table_offset + len(table)
    head = store._HEADER_V1.pack(store.MAGIC, 1, s.flags, n, s.bases, s.payload_offset,
                                 s.payload_bytes, s.table_offset, len(table), file_bytes,
                                 bytes.fromhex(s.source_sha256), bytes.fromhex(s.payload_sha256),
                                 zlib.crc32(table))
    head += store._HEADER_CRC.pack(zlib.crc32(head))
    with open(out, "wb") as fh:
        fh.write(head + b"\0" * (store.HEADER_BYTES - len(head)))
        fh.write(data[store.HEADER_BYTES:s.table_offset] + table)


def test_format_1_store_still_reads(tmp_path, capsys):
    """A format-1 store opens: its N runs are found in the packed codes (the same as a
    format-2 table), its gapped view works, its mask is unknown."""
    path = tmp_path / "g.fa"
    path.write_text(_fasta_text(TWOBIT_RECORDS, 50))
    new = tmp_path / "new.psg"
    store.build(path, new)
    old = tmp_path / "old.psg"
    _as_format_1(new, old)
    a, b = load(old), load(new)
    assert store.open_store(old).version == 1 and store.open_store(new).version == 2
    for x, y in zip(a, b):
        assert np.array_equal(x.codes, y.codes)
        assert _pair(x.n_runs()) == _pair(y.n_runs())
        assert np.array_equal(x.with_gap_min(10).codes, y.with_gap_min(10).codes)
        assert x.soft_mask is None and not x.soft_mask_known and y.soft_mask_known
    assert store.verify(old).version == 1
    assert cli_main(["index", "--check", str(old)]) == 0
    assert "format 1 (no gap or mask table" in capsys.readouterr().out


def test_interval_damage_is_found(tmp_path):
    path = tmp_path / "g.fa"
    path.write_text(_fasta_text(TWOBIT_RECORDS, 50))
    out = tmp_path / "g.psg"
    store.build(path, out)
    data = bytearray(out.read_bytes())
    data[-3] ^= 1  # the last mask end
    bad = tmp_path / "bad.psg"
    bad.write_bytes(bytes(data))
    recs = load(bad)  # opening reads header and table only
    with pytest.raises(store.StoreError, match="interval table checksum"):
        recs[0].n_runs()
    with pytest.raises(store.StoreError, match="interval table checksum"):
        store.verify(bad)


def test_cli_index_gap_min(tmp_path, capsys):
    path = tmp_path / "g.fa"
    path.write_text(">a\nACGT" + "N" * 12 + "acgtNNNNNA\n")
    out = tmp_path / "g.psg"
    assert cli_main(["index", str(path), "-o", str(out), "--gap-min", "5", "--no-progress"]) == 0
    line = capsys.readouterr().out
    assert "2 gaps (17 bases in runs of >= 5 N), 4 soft-masked bases" in line
    assert store.open_store(out).gap_min == 5
    assert load(out)[0].with_gap_min().gap_runs()[0].tolist() == [4, 20]
    assert cli_main(["index", str(path), "-o", str(tmp_path / "h.psg"), "--gap-min", "0"]) == 2
    assert "gap_min must be >= 1" in capsys.readouterr().err


def test_unset_gap_min_is_the_stores_own(tmp_path):
    """Issue #28: a store's gap_min is a property of its genome. An unset gap_min (API,
    command line) takes it for a store background and 10 otherwise; an explicit value wins.
    The 15-N run below is a gap at 10 (the site across it is lost) but not at 20 (N is any
    base: the site is found with 0 edits)."""
    from engine import kmismatch
    from tests.reliability.helpers import run

    flank = "GATTACAGGCT"
    path = tmp_path / "g.fa"
    path.write_text(">chr\n" + "CCCC" * 5 + flank + "N" * 15 + flank + "CCCC" * 5 + "\n")
    at20 = tmp_path / "g20.psg"
    store.build(path, at20, gap_min=20)
    primer = flank + "A" * 15 + flank

    def count(text, gap_min=None):
        job = kmismatch.make_job(load(primer), text, 0, strands="forward", gap_min=gap_min,
                                 backend="serial")
        return job.params["gap_min"], gaps.resolve_gap_min(text, gap_min)

    assert count(load(at20)) == (20, 20)
    assert count(load(str(path))) == (10, 10)
    assert count(load(at20), 10) == (10, 10)
    assert gaps.as_background(load(at20))[0].gap_min == 20
    assert gaps.as_background(load(at20), 12)[0].gap_min == 12
    found = [run("offtarget", primer, background, "--max-edits", "0", "--no-progress", *extra)
             for background, extra in ((at20, ()), (path, ()), (at20, ("--gap-min", "10")))]
    assert [f.returncode for f in found] == [0, 0, 0], [f.stderr for f in found]
    assert [len(f.stdout.strip().splitlines()) - 1 for f in found] == [1, 0, 0]
