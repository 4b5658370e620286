"""The genome store (engine/store.py, ``primerscope index``): round trips, damage, interruption."""

from __future__ import annotations

import gzip
import json
import os
import struct
import subprocess
import sys
import time
import zlib

import numpy as np
import pytest
from Bio import SeqIO, bgzf
from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord

from engine import store
from engine.cli import main as cli_main
from engine.sequences import _description, record_id, Record, SequenceError, load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECORDS = [("chr1", "ACGTNacgtnRYKMSWBDHV" * 7 + "A"), ("chr2", "G"), ("chr3", "ttgacca" * 50),
           ("chr4", "NNNNNNNNNNACGT")]


def _seq_records(records=RECORDS):
    return [SeqRecord(Seq(s), id=i, name=i, description=f"{i} test record {n}",
                      annotations={"molecule_type": "DNA"}) for n, (i, s) in enumerate(records)]


def _biopython(path, fmt):
    """Biopython's records, named as primerscope names every record (engine.sequences:
    NCBI gi ids as their accession, the description without the id repeated)."""
    opener = gzip.open if str(path).endswith((".gz", ".bgz")) else open
    mode = "rb" if fmt == "twobit" else "rt"
    with opener(path, mode) as fh:
        return [(record_id(r.id), _description(r.id, r.description) if r.description != r.id
                 else "", str(r.seq).upper()) for r in SeqIO.parse(fh, fmt)]


def _stored(path):
    return [(r.id, r.description, r.text) for r in load(path)]


def _build(tmp_path, source, name="out.psg"):
    out = tmp_path / name
    store.build(source, out)
    return out


# ---------------------------------------------------------------------------- round trips

@pytest.mark.parametrize("name,fmt", [("g.fa", "fasta"), ("g.fasta.gz", "fasta"),
                                      ("g.gb", "genbank"), ("g.gbk.gz", "genbank"),
                                      ("g.embl", "embl")])
def test_round_trip_equals_biopython(tmp_path, name, fmt):
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as fh:
            SeqIO.write(_seq_records(), fh, fmt)
    else:
        SeqIO.write(_seq_records(), path, fmt)
    out = _build(tmp_path, path)
    assert _stored(out) == _biopython(path, fmt)
    assert [(r.id, r.text) for r in load(out)] == [(r.id, r.text) for r in load(path)]


def test_bgzip_round_trip(tmp_path):
    path = tmp_path / "g.fa.bgz"
    with bgzf.BgzfWriter(path, "wb") as fh:  # many gzip members of 64 kB
        for rid, seq in [("big", "ACGT" * 40_000), ("small", "GGA")]:
            fh.write(f">{rid} d\n".encode())
            for i in range(0, len(seq), 70):
                fh.write((seq[i:i + 70] + "\n").encode())
    out = _build(tmp_path, path)
    assert _stored(out) == _biopython(path, "fasta")


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 23])
def test_fasta_block_edges(tmp_path, monkeypatch, block):
    """Headers, newlines, CRLF, blank lines, spaces and one-line records cut at any block."""
    text = (">r1 first one\r\nACGT\r\nac gt\r\n\r\n>r2\nNNNN\n" + "A" * 300 + "\n>r3  trailing  \n"
            + "GATTACA" * 40 + "\n>r4\nT")
    path = tmp_path / "edges.fa"
    path.write_text(text, newline="")
    monkeypatch.setattr(store, "BUILD_BLOCK", block)
    out = _build(tmp_path, path)
    assert _stored(out) == _biopython(path, "fasta")
    assert _stored(out) == [(r.id, r.description, r.text) for r in load(path)]


def _write_2bit(path, records, masks=None):
    """A minimal UCSC .2bit writer (version 0): N blocks from the Ns, mask blocks from
    lower case."""
    codes = {"T": 0, "C": 1, "A": 2, "G": 3, "N": 0}
    index, blobs = [], []
    header = 16 + sum(1 + len(name) + 4 for name, _ in records)
    offset = header
    for name, seq in records:
        up = seq.upper()
        nblocks = _runs([c == "N" for c in up])
        mblocks = _runs([c.islower() for c in seq])
        dna = [codes[c] for c in up] + [0] * (-len(up) % 4)
        packed = bytes((dna[i] << 6) | (dna[i + 1] << 4) | (dna[i + 2] << 2) | dna[i + 3]
                       for i in range(0, len(dna), 4))
        blob = struct.pack("<II", len(seq), len(nblocks))
        blob += b"".join(struct.pack("<I", s) for s, _ in nblocks)
        blob += b"".join(struct.pack("<I", n) for _, n in nblocks)
        blob += struct.pack("<I", len(mblocks))
        blob += b"".join(struct.pack("<I", s) for s, _ in mblocks)
        blob += b"".join(struct.pack("<I", n) for _, n in mblocks)
        blob += struct.pack("<I", 0) + packed
        index.append(struct.pack("<B", len(name)) + name.encode() + struct.pack("<I", offset))
        blobs.append(blob)
        offset += len(blob)
    path.write_bytes(struct.pack("<IIII", 0x1A412743, 0, len(records), 0) + b"".join(index)
                     + b"".join(blobs))


def _runs(flags):
    out, start = [], None
    for i, f in enumerate(flags + [False]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            out.append((start, i - start))
            start = None
    return out


@pytest.mark.parametrize("reader", ["py2bit", "biopython"])
def test_twobit_round_trip(tmp_path, monkeypatch, reader):
    if reader == "py2bit":
        pytest.importorskip("py2bit")
    else:
        monkeypatch.setitem(sys.modules, "py2bit", None)  # the fallback reader
    records = [("chrA", "ACGTNNNNacgtTTGA" * 20 + "GCA"), ("chrB", "NNNNN"), ("chrC", "g")]
    path = tmp_path / "g.2bit"
    _write_2bit(path, records)
    out = _build(tmp_path, path)
    assert [(i, s) for i, _, s in _stored(out)] == [(i, s) for i, _, s in _biopython(path, "twobit")]
    assert [(i, s) for i, _, s in _stored(out)] == [(i, s.upper()) for i, s in records]


def test_store_records_are_records(tmp_path):
    out = _build(tmp_path, _fasta(tmp_path, [("a", "ACGTACGTAC"), ("b", "GGT")]))
    recs = load(out)
    assert all(isinstance(r, Record) and isinstance(r, store.StoreRecord) for r in recs)
    a = recs[0]
    assert len(a) == 10 and a.text == "ACGTACGTAC"
    assert a.chunk(3, 8).tolist() == [8, 1, 2, 4, 8]
    assert a.slice(1, 4).text == "CGT" and a.slice(1, 4).id == "a[1:4]"
    assert a.codes.tolist() == load("ACGTACGTAC")[0].codes.tolist()
    info = store.open_store(out).info()
    assert info.records == 2 and info.bases == 13 and info.source["format"] == "fasta"
    # the magic is enough, whatever the name
    renamed = tmp_path / "renamed.bin"
    os.link(out, renamed)
    assert [r.text for r in load(renamed)] == ["ACGTACGTAC", "GGT"]


def _fasta(tmp_path, records, name="in.fa"):
    path = tmp_path / name
    path.write_text("".join(f">{i}\n{s}\n" for i, s in records))
    return path


# ---------------------------------------------------------------------------- bad input

def test_invalid_character_reported_as_load_does(tmp_path):
    path = _fasta(tmp_path, [("ok", "ACGT"), ("bad", "ACGTAC-GT")])
    with pytest.raises(SequenceError) as via_load:
        load(path)
    with pytest.raises(SequenceError) as via_store:
        store.build(path, tmp_path / "x.psg")
    assert str(via_store.value) == str(via_load.value)
    assert "position 7" in str(via_store.value)
    assert not (tmp_path / "x.psg").exists()


@pytest.mark.parametrize("text,message", [("", "no fasta sequence records"),
                                          (">a\nACGT\n>b\n", "record 'b' is empty"),
                                          ("ACGT\n>a\nAC\n", "before the first '>'")])
def test_bad_fasta(tmp_path, text, message):
    path = tmp_path / "bad.fa"
    path.write_text(text)
    with pytest.raises(store.StoreError, match=message):
        store.build(path, tmp_path / "x.psg")


# ---------------------------------------------------------------------------- damage

def _damaged(tmp_path, change):
    out = _build(tmp_path, _fasta(tmp_path, [("a", "ACGT" * 500), ("b", "GGT")]))
    data = bytearray(out.read_bytes())
    data = change(data)
    bad = tmp_path / "bad.psg"
    bad.write_bytes(bytes(data))
    return bad


@pytest.mark.parametrize("change,message", [
    (lambda d: d[:len(d) - 10], "truncated"),
    (lambda d: d[:3000], "truncated"),
    (lambda d: d[:20], "truncated"),
    (lambda d: d + b"x", "truncated or damaged"),
    (lambda d: b"NOTASTOR" + d[8:], "not a primerscope genome store"),
    (lambda d: d[:40] + bytes([d[40] ^ 1]) + d[41:], "header checksum"),
    (lambda d: d[:-5] + bytes([d[-5] ^ 1]) + d[-4:], "record table checksum"),
])
def test_damaged_store_one_line_error(tmp_path, change, message):
    bad = _damaged(tmp_path, change)
    with pytest.raises(store.StoreError, match=message) as err:
        load(bad)
    assert "\n" not in str(err.value)


def test_payload_damage_found_by_verify(tmp_path):
    bad = _damaged(tmp_path, lambda d: d[:5000] + bytes([d[5000] ^ 0x11]) + d[5001:])
    load(bad)  # opening reads header and table only
    with pytest.raises(store.StoreError, match="payload checksum"):
        store.verify(bad)


def test_version_mismatch(tmp_path):
    def bump(d):
        head = bytearray(d[:store._HEADER.size])
        head[8:12] = struct.pack("<I", store.VERSION + 1)
        crc = store._HEADER_CRC.pack(zlib.crc32(bytes(head)))
        return bytes(head) + crc + d[store._HEADER.size + 4:]

    with pytest.raises(store.StoreError, match="format version"):
        load(_damaged(tmp_path, bump))


def test_cli_errors_are_one_line(tmp_path, capsys):
    bad = _damaged(tmp_path, lambda d: d[:3000])
    assert cli_main(["kdiff", "ACGTACGTAGCTAGCTAG", str(bad), "-k", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "truncated" in err


# ---------------------------------------------------------------------------- interruption

def test_interrupted_build_leaves_nothing(tmp_path, monkeypatch):
    path = _fasta(tmp_path, [("a", "ACGT" * 1000), ("b", "GGT" * 1000)])
    calls = []

    def interrupt(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(store, "BUILD_BLOCK", 100)
    with pytest.raises(KeyboardInterrupt):
        store.build(path, tmp_path / "g.psg", progress=lambda done, total: interrupt())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.fa"]


def test_killed_build_leaves_no_store(tmp_path):
    """SIGKILL in the middle of a build: no store under its name, and the temporary file
    left behind (nothing can remove it) does not open as a store."""
    path = _fasta(tmp_path, [(f"r{i}", "ACGT" * 5000) for i in range(20)])
    code = ("import os, signal, sys; from engine import store; store.BUILD_BLOCK = 4096;"
            "n = [0]\n"
            "def kill(done, total):\n"
            "    n[0] += 1\n"
            "    if n[0] == 5: os.kill(os.getpid(), signal.SIGKILL)\n"
            f"store.build({str(path)!r}, {str(tmp_path / 'g.psg')!r}, kill)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True)
    assert proc.returncode == -9
    left = [p for p in tmp_path.iterdir() if p.name != "in.fa"]
    assert not (tmp_path / "g.psg").exists()
    for p in left:
        with pytest.raises(store.StoreError, match="not a primerscope genome store"):
            store.open_store(p)


# ---------------------------------------------------------------------------- opening

def test_open_maps_without_reading(tmp_path):
    """A 3.1 Gb store (sparse file: its payload is a hole) opens in well under 2 s. It is a
    format-1 store (no interval tables): older stores still open."""
    n_records, per = 24, 3_100_000_000 // 24
    lengths = np.full(n_records, per, dtype="<i8")
    offsets = np.arange(n_records, dtype="<i8") * ((per + 1) // 2)
    payload = int(offsets[-1] + (per + 1) // 2)
    import json

    meta = json.dumps({"ids": [f"chr{i}" for i in range(n_records)],
                       "descriptions": [""] * n_records, "source": {}}).encode()
    table = lengths.tobytes() + offsets.tobytes() + meta
    table_offset = store.HEADER_BYTES + payload
    head = store._HEADER_V1.pack(store.MAGIC, 1, store.FLAG_PACKED, n_records,
                              per * n_records, store.HEADER_BYTES, payload, table_offset,
                              len(table), table_offset + len(table), b"\0" * 32, b"\0" * 32,
                              zlib.crc32(table))
    path = tmp_path / "human.psg"
    with open(path, "wb") as fh:
        fh.write(head + store._HEADER_CRC.pack(zlib.crc32(head)))
        fh.seek(table_offset)
        fh.write(table)
    store.open_store(path)  # imports
    t0 = time.perf_counter()
    recs = load(path)
    seconds = time.perf_counter() - t0
    assert seconds < 2.0
    assert sum(len(r) for r in recs) == per * n_records
    assert recs[5].chunk(10**8, 10**8 + 4).tolist() == [0, 0, 0, 0]  # the hole reads as zeros


# ---------------------------------------------------------------------------- the command

def test_cli_index_then_kdiff_equal_outputs(tmp_path, capsys):
    genome = _fasta(tmp_path, [("g1", "ACGTTGCAAGGCTTACGATCGATCGGGATCCATGCA" * 3), ("g2", "TTGACCAGT")])
    out = tmp_path / "g.psg"
    assert cli_main(["index", str(genome), "-o", str(out), "--no-progress"]) == 0
    line = capsys.readouterr().out
    assert "built, 2 records" in line
    assert cli_main(["index", "--check", str(out)]) == 0
    assert "ok, 2 records, 117 bases, 0 gaps (" in capsys.readouterr().out
    assert cli_main(["index", "--check", str(out), "--json"]) == 0  # (every subcommand takes it)
    got = json.loads(capsys.readouterr().out)
    assert {k: got[k] for k in ("command", "action", "records", "bases", "gaps", "format")} == \
        {"command": "index", "action": "ok", "records": 2, "bases": 117, "gaps": 0, "format": 2}
    target = "ACGTTGCAAGGCTTACGAGGCATCGGGATCCATG"
    assert cli_main(["kdiff", target, str(genome), "-k", "2", "--backend", "serial"]) == 0
    via_fasta = capsys.readouterr().out
    assert cli_main(["kdiff", target, str(out), "-k", "2", "--backend", "serial"]) == 0
    assert capsys.readouterr().out == via_fasta


def test_cli_index_default_name_and_refusals(tmp_path, capsys):
    genome = _fasta(tmp_path, [("g1", "ACGT")], name="genome.fa")
    assert cli_main(["index", str(genome)]) == 0
    assert (tmp_path / "genome.psg").exists()
    assert cli_main(["index", str(genome), "-o", str(tmp_path / "x.txt")]) == 2
    assert cli_main(["index", str(genome), "-o", str(genome)]) == 2
    assert "ends with .psg" in capsys.readouterr().err


def test_a_directory_or_a_missing_path_is_a_one_line_store_error(tmp_path):
    """Opening a directory read-only succeeds on Linux; the header's read then fails."""
    with pytest.raises(store.StoreError, match="is a directory, not a genome store"):
        store.GenomeStore(tmp_path)
    with pytest.raises(store.StoreError, match="no such file"):
        store.GenomeStore(tmp_path / "absent.psg")
