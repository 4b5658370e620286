"""Loading, validation, encoding and reverse complement (engine/sequences.py)."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest
from Bio import SeqIO
from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.sequences import (IUPAC_CODES, SequenceError, concat_with_offsets, decode, encode,
                              load, reverse_complement)
from tests.strategies import examples


def _write(tmp_path, name, records, fmt):
    path = tmp_path / name
    recs = [SeqRecord(Seq(s), id=i, name=i, description=f"test {i}",
                      annotations={"molecule_type": "DNA"}) for i, s in records]
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as fh:
            SeqIO.write(recs, fh, fmt)
    else:
        SeqIO.write(recs, path, fmt)
    return path


@pytest.mark.parametrize("name,fmt", [
    ("a.fa", "fasta"), ("a.fasta.gz", "fasta"), ("a.gb", "genbank"), ("a.gbk.gz", "genbank"),
    ("a.embl", "embl"), ("noext", "fasta"), ("noext_gb", "genbank"),
])
def test_formats_and_multi_record(tmp_path, name, fmt):
    path = _write(tmp_path, name, [("r1", "ACGTN"), ("r2", "ggccaRY")], fmt)
    records = load(path)
    assert [r.id for r in records] == ["r1", "r2"]
    assert [r.text for r in records] == ["ACGTN", "GGCCARY"]
    assert len(records[1]) == 7


def test_literals_lower_case_and_rna():
    (rec,) = load("acguN")
    assert rec.id == "literal" and rec.text == "ACGTN"
    assert encode("ACGTRYSWKMBDHVN").tolist() == [IUPAC_CODES[c] for c in "ACGTRYSWKMBDHVN"]


def test_reverse_complement_follows_the_iupac_table():
    table = {"A": "T", "C": "G", "G": "C", "T": "A", "R": "Y", "Y": "R", "S": "S", "W": "W",
             "K": "M", "M": "K", "B": "V", "V": "B", "D": "H", "H": "D", "N": "N"}
    text = "ACGTRYSWKMBDHVN"
    assert decode(reverse_complement(encode(text))) == "".join(table[c] for c in reversed(text))


def test_concat_offsets():
    flat, offsets = concat_with_offsets(load("ACG") + load("TT"))
    assert decode(flat) == "ACGTT" and offsets.tolist() == [0, 3, 5]


@pytest.mark.parametrize("content,expected", [
    (">p1\nMEEPQSDPSV\n", r"record 'p1' position 2: invalid character 'E' \(not a nucleotide code; is this a protein"),
    (">g1\nACGT\n>g2\nAC-GT\n", r"record 'g2' position 3: invalid character '-' \(a gap character"),
    (">d1\nACGT7A\n", r"record 'd1' position 5: invalid character '7' \(a digit\)"),
    (">e1\n\n>e2\nACGT\n", r"record 'e1' is empty"),
    ("", r"no fasta sequence records found"),
])
def test_bad_input_names_file_record_position_and_character(tmp_path, content, expected):
    path = tmp_path / "bad.fa"
    path.write_text(content)
    with pytest.raises(SequenceError, match=expected) as err:
        load(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_missing_directory_and_unknown_format(tmp_path):
    with pytest.raises(SequenceError, match="no such file"):
        load(tmp_path / "missing.fa")
    with pytest.raises(SequenceError, match="is a directory"):
        load(tmp_path)
    odd = tmp_path / "odd.txt"
    odd.write_text("hello world\n")
    with pytest.raises(SequenceError, match="unknown sequence format"):
        load(odd)


def test_missing_gz_file_is_no_such_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a bare name: no folder in it to say it is a path
    with pytest.raises(SequenceError, match="reads.gz: no such file"):
        load("reads.gz")


def test_bad_literal():
    with pytest.raises(SequenceError, match="position 3: invalid character 'E'"):
        load("ACEGT")


def test_demo_files_load(demo_dir):
    assert len(load(demo_dir / "msx2_mrna_homologs.fa")) == 8
    assert len(load(demo_dir / "yeast_someORF.fa")) == 7
    lam = load(demo_dir / "lambda_NC_001416.fa")[0]
    assert len(lam) == 48502 and np.all(lam.codes > 0)


_FASTA_LINES = st.sampled_from([
    ">", "> ", ">id", ">id desc", ">id\tdesc  ", ">gi|9626243|ref|NC_001416.1| lambda", ">a\x1cb c",
    ">\t", "ACGT", "acgt", "AC GT\t", "ACGT\r", "NNRY", "", " ", "\r", ">>x", "AC-GT", ";comment",
])


@settings(max_examples=examples(200))
@given(st.lists(_FASTA_LINES, min_size=1, max_size=12), st.sampled_from(("\n", "\r\n")),
       st.booleans())
def test_checked_fasta_reader_reads_what_biopython_reads(lines, newline, final):
    """The FASTA checks before Biopython's SimpleFastaParser change no record: the same ids,
    titles and sequences as Bio.SeqIO's "fasta" parser on any text that starts with '>'."""
    from pathlib import Path

    from engine.sequences import _fasta_records

    text = ">" + newline.join(lines) + (newline if final else "")
    if any(line.startswith(";") for line in lines[1:]):  # comment lines: one-line errors
        with pytest.raises(SequenceError, match="comment lines are not read"):
            list(_fasta_records(text.replace("\r\n", "\n"), Path("t.fa")))
        return
    got = list(_fasta_records(text.replace("\r\n", "\n"), Path("t.fa")))
    want = [(r.id, r.description, str(r.seq)) for r in SeqIO.parse(io.StringIO(text), "fasta")]
    assert got == want


def test_encode_is_the_table_on_every_byte():
    """encode's bytes.translate is the IUPAC table, byte by byte; every other byte fails with
    its position."""
    from engine.sequences import _ENCODE_TABLE

    for byte in range(256):
        text = bytes([65, byte, 67])
        if _ENCODE_TABLE[byte]:
            codes = encode(text)
            assert codes.tolist() == [1, int(_ENCODE_TABLE[byte]), 2]
            assert codes.dtype == np.uint8 and codes.flags.writeable
        else:
            with pytest.raises(SequenceError, match="position 2: invalid character"):
                encode(text)


# -- SeqColumns: many sequences as one buffer and ranges ------------------------------------------
@settings(max_examples=examples(30))
@given(st.lists(st.text(alphabet="ACGTNRYacgtu", min_size=0, max_size=12), min_size=0, max_size=6))
def test_seq_columns_encode_as_encode_does(texts):
    """SeqColumns.encode (one pass over all letters) gives each sequence's encode(), from a
    list or from one string with offsets; items are Records viewing the buffer."""
    from engine.sequences import SeqColumns

    batch = SeqColumns.encode(texts, ids="s")
    offsets = np.concatenate(([0], np.cumsum([len(t) for t in texts]))).astype(np.int64)
    assert batch.offsets.tolist() == offsets.tolist() and len(batch) == len(texts)
    joined = SeqColumns.encode("".join(texts), offsets, [f"s{i}" for i in range(len(texts))])
    for i, t in enumerate(texts):
        want = encode(t).tolist() if t else []
        assert batch[i].codes.tolist() == want and joined[i].codes.tolist() == want
        assert batch[i].id == joined[i].id == f"s{i}"
    assert batch.lengths.tolist() == [len(t) for t in texts]


def test_seq_columns_ranges_records_and_take():
    from engine.columns import Ids
    from engine.sequences import Record, SeqColumns

    genome = encode("ACGTACGTTTGGCCAA")
    regions = SeqColumns.from_ranges(genome, [8, 0, 4], [12, 6, 16], Ids.numbered("c", 3, [7, 8, 9]),
                                     shifts=[100, 0, 3])
    assert [r.text for r in regions] == ["TTGG", "ACGTAC", "ACGTTTGGCCAA"]
    assert [r.id for r in regions] == ["c7", "c8", "c9"] and regions[0].offset == 100
    assert not regions.contiguous()
    with pytest.raises(ValueError, match="do not lie end to end"):
        _ = regions.offsets
    back = regions.take([2, 0])
    assert [r.text for r in back] == ["ACGTTTGGCCAA", "TTGG"] and back.ids[1] == "c7"
    assert back.shift_array().tolist() == [3, 100] and [r.id for r in regions[1:]] == ["c8", "c9"]
    records = [Record("x", encode("ACG"), "a description", "x.fa"), Record("y", encode("TT"), offset=5)]
    cols = SeqColumns.from_records(records)
    assert cols[0] is records[0] and cols.offsets.tolist() == [0, 3, 5]
    assert decode(cols.codes) == "ACGTT" and cols.shift_array().tolist() == [0, 5]
    assert list(cols.ids) == ["x", "y"] and cols.take([1])[0] is records[1]
    single = SeqColumns.from_records(records[:1])
    assert single.codes is records[0].codes  # one record: read in place
