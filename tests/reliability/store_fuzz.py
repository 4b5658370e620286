"""Issue #34's store and .2bit fuzzers, run as ``python -m tests.reliability.store_fuzz
store|twobit`` by test_store_hostile.py: in a child process, so that a read outside the map
(SIGSEGV, SIGBUS) fails the test with its signal instead of killing the test run.

Store: one byte of the header, record table, interval tables or payload is changed, with
the checksums (CRC-32s, payload SHA-256, header CRC) recomputed or left. Opening, reading
every record, its N and mask runs, and ``verify`` (``index --check``) must then give the
original answer, or stop with one-line StoreError naming the store. Where the change is a
legitimate edit of data the checksums then vouch for (a payload byte, a name, a mask run,
gap_min) the answer is compared with what the changed bytes say instead.

.2bit: the file cut at every section edge and inside each, and its header and index bytes
changed: ``build`` must give the original store or one-line StoreError, and leave no
temporary file.
"""

from __future__ import annotations

import hashlib
import struct
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import store
from engine.sequences import decode
from tests.reliability.helpers import leftovers

RECORDS = [("chr1", "ACGTNNNNNNNNNNNNacgtacgtTTGCA" * 3 + "NNN"),
           ("chr2", "GGATCCnnnnACGT"),
           ("chr3", "A")]


def _fasta(path: Path, records=RECORDS) -> Path:
    path.write_text("".join(f">{name} {name} description\n{seq}\n" for name, seq in records))
    return path


def _answer(path: Path):
    """What a job reads from the store: ids, codes, N runs, mask runs (lists); verified."""
    s = store.GenomeStore(path)
    out = []
    for i, record in enumerate(s.records()):
        mask = s.soft_mask(i)
        out.append((record.id, decode(record.chunk(0, len(record))),
                    [a.tolist() for a in s.n_runs(i)], [a.tolist() for a in mask]))
    store.verify(path)
    return out


def _reseal(data: bytearray) -> bytearray:
    """The checksums recomputed from the (changed) sections, as a crafter would."""
    f = list(store._HEADER.unpack_from(data))
    pay_off, pay_len, tab_off, tab_len = f[5], f[6], f[7], f[8]
    int_off, int_len = f[13], f[14]
    if pay_off + pay_len <= len(data):
        f[11] = hashlib.sha256(data[pay_off:pay_off + pay_len]).digest()
    if tab_off + tab_len <= len(data):
        f[12] = zlib.crc32(data[tab_off:tab_off + tab_len])
    if int_off + int_len <= len(data):
        f[15] = zlib.crc32(data[int_off:int_off + int_len])
    head = store._HEADER.pack(*f)
    data[:len(head) + 4] = head + store._HEADER_CRC.pack(zlib.crc32(head))
    return data


def _sections(data: bytes) -> dict[str, tuple[int, int]]:
    f = store._HEADER.unpack_from(data)
    n = f[3]
    return {"header": (0, store._HEADER.size), "payload": (f[5], f[6]),
            "columns": (f[7], 32 * n), "names": (f[7] + 32 * n, f[8] - 32 * n),
            "intervals": (f[13], f[14])}


def _expected_payload_edit(original, data: bytes, at: int):
    """The answer with the codes of the changed payload byte as they now read."""
    f = store._HEADER.unpack_from(data)
    byte = at - f[5]
    out = []
    offsets = np.cumsum([0] + [(len(seq) + 1) // 2 for _, seq, _, _ in original])
    for (rid, seq, n_runs, mask), lo in zip(original, offsets):
        seq = list(seq)
        for q in (2 * (byte - lo), 2 * (byte - lo) + 1):
            if 0 <= q < len(seq):
                code = data[at] >> 4 if q & 1 else data[at] & 15
                seq[q] = decode(np.array([code], dtype=np.uint8))
        out.append((rid, "".join(seq), n_runs, mask))
    return out


@settings(deadline=None)
@given(section=st.sampled_from(["header", "payload", "columns", "names", "intervals"]),
       where=st.floats(0, 1, exclude_max=True), value=st.integers(0, 255),
       reseal=st.booleans(), field_value=st.one_of(st.none(), st.integers(-2**40, 2**40)))
def fuzz_store(section, where, value, reseal, field_value):
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        good = folder / "good.psg"
        store.build(_fasta(folder / "g.fa"), good)
        original = _answer(good)
        data = bytearray(good.read_bytes())
        lo, length = _sections(data)[section]
        at = lo + int(where * length)
        if field_value is not None and section in ("header", "columns"):
            at -= (at - lo) % 8 if section == "columns" else 0
            width = 8 if section == "columns" or at >= 12 else 4
            data[at:at + width] = (field_value % 2 ** (8 * width)).to_bytes(width, "little")
        else:
            data[at] = value
        if reseal:
            data = _reseal(data)
        bad = folder / "bad.psg"
        bad.write_bytes(bytes(data))
        try:
            got = _answer(bad)
        except store.StoreError as exc:
            message = str(exc)
            assert "\n" not in message and message.startswith(str(bad)), message
            return
        if got == original:
            return
        # a change the checksums vouch for: the answer is what the changed bytes say
        assert reseal, (section, at, got, original)
        if section == "payload":
            assert got == _expected_payload_edit(original, bytes(data), at), (at, got)
        elif section == "names":
            ids = [g[0] for g in got]
            assert len(set(ids)) == len(ids) and all(ids)
            assert [g[1:] for g in got] == [o[1:] for o in original]
        elif section == "intervals":  # a mask run moved, still inside its record, in order
            assert [g[:3] for g in got] == [o[:3] for o in original]
            for (_, seq, _, (starts, ends)) in got:
                assert all(0 <= a < b <= len(seq) for a, b in zip(starts, ends))
                assert all(b <= a for b, a in zip(ends, starts[1:]))
        else:
            raise AssertionError((section, at, got, original))


def _write_2bit(path: Path, records) -> list[int]:
    """A .2bit file of ``records`` (version 0, N and mask blocks); returns the offsets where
    its sections begin (header, index, each record's counts, blocks, packed bases)."""
    codes = {"T": 0, "C": 1, "A": 2, "G": 3, "N": 0}
    edges = [0, 16]
    header = 16 + sum(1 + len(name) + 4 for name, _ in records)
    index, blobs, offset = [], [], header
    for name, seq in records:
        up = seq.upper()
        nblocks, mblocks = _blocks([c == "N" for c in up]), _blocks([c.islower() for c in seq])
        dna = [codes[c] for c in up] + [0] * (-len(up) % 4)
        packed = bytes((dna[i] << 6) | (dna[i + 1] << 4) | (dna[i + 2] << 2) | dna[i + 3]
                       for i in range(0, len(dna), 4))
        parts = [struct.pack("<II", len(seq), len(nblocks)),
                 b"".join(struct.pack("<I", s) for s, _ in nblocks)
                 + b"".join(struct.pack("<I", n) for _, n in nblocks),
                 struct.pack("<I", len(mblocks)),
                 b"".join(struct.pack("<I", s) for s, _ in mblocks)
                 + b"".join(struct.pack("<I", n) for _, n in mblocks),
                 struct.pack("<I", 0), packed]
        for part in parts:
            edges.append(offset)
            offset += len(part)
        index.append(struct.pack("<B", len(name)) + name.encode()
                     + struct.pack("<I", offset - sum(map(len, parts))))
        blobs.append(b"".join(parts))
    path.write_bytes(struct.pack("<IIII", 0x1A412743, 0, len(records), 0) + b"".join(index)
                     + b"".join(blobs))
    return sorted(set(edges))


def _blocks(flags):
    out, start = [], None
    for i, f in enumerate(flags + [False]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            out.append((start, i - start))
            start = None
    return out


def _build_or_error(source: Path, folder: Path):
    out = folder / "out.psg"
    out.unlink(missing_ok=True)
    try:
        store.build(source, out)
    except store.StoreError as exc:
        message = str(exc)
        assert "\n" not in message and message.startswith(str(source)), message
        assert not out.exists()
        return None
    finally:
        assert leftovers(folder) == [], leftovers(folder)
    return _answer(out)


def fuzz_twobit_truncations() -> int:
    """Every cut at a section edge, one byte either side of it, and inside each section."""
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        source = folder / "g.2bit"
        edges = _write_2bit(source, RECORDS)
        whole = source.read_bytes()
        original = _build_or_error(source, folder)
        assert original is not None
        cuts = {c for e in edges + [len(whole)] for c in (e - 1, e, e + 1) if 0 <= c < len(whole)}
        cuts |= {(a + b) // 2 for a, b in zip(edges, edges[1:] + [len(whole)])}
        for cut in sorted(cuts):
            (folder / "cut.2bit").write_bytes(whole[:cut])
            assert _build_or_error(folder / "cut.2bit", folder) is None, cut
        return len(cuts)


def _upper(raw: bytes) -> str:
    """Biopython's 2bit reader, upper-cased. It lowers a base by adding 32 once per mask block
    over it, so where a changed header makes two blocks overlap it leaves bytes past 'z' (0x81
    for 'A'); a base is its letter modulo 32 (the store reads overlapping blocks as their
    union, as twoBitToFa does)."""
    return bytes(0x41 + (b - 0x41) % 32 for b in raw).decode("ascii")


@settings(deadline=None)
@given(at=st.integers(0, 200), value=st.integers(0, 255),
       word=st.one_of(st.none(), st.integers(0, 2**32 - 1)))
@example(at=91, value=9, word=None)  # chr1's mask blocks overlap (CI, stop 36)
def fuzz_twobit_header(at, value, word):
    """A changed byte (or 32-bit word) in the header, the index or a record's counts."""
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        source = folder / "g.2bit"
        _write_2bit(source, RECORDS)
        original = _build_or_error(source, folder)
        data = bytearray(source.read_bytes())
        at = min(at, len(data) - 4)
        if word is None:
            data[at] = value
        else:
            data[at:at + 4] = struct.pack("<I", word)
        source.write_bytes(bytes(data))
        got = _build_or_error(source, folder)
        if got is None or got == original:
            return
        # still a valid file (a name, a base, a block moved inside its record): it must
        # read as Biopython's reader reads it
        from Bio import SeqIO

        with open(source, "rb") as fh:
            theirs = [(r.id, _upper(bytes(r.seq))) for r in SeqIO.parse(fh, "twobit")]
        assert [(g[0], g[1]) for g in got] == theirs, (at, value, word, got, theirs)


def main(argv: list[str]) -> int:
    if argv[1:] == ["store"]:
        fuzz_store()
    elif argv[1:] == ["twobit"]:
        print(f"{fuzz_twobit_truncations()} truncations")
        fuzz_twobit_header()
    else:
        print("usage: python -m tests.reliability.store_fuzz store|twobit", file=sys.stderr)
        return 2
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
