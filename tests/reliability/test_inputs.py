"""Defects 5, 7 and 10 of issue #14: FASTA quirks, literals that are not sequences, files
named like literals, and duplicate record ids."""

from __future__ import annotations

import gzip
import warnings

import pytest

from engine.sequences import SequenceError, SequenceWarning, load
from tests.reliability.helpers import one_line_error, run


def _write(tmp_path, data: bytes, name="in.fa"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("data", [
    b"\xef\xbb\xbf>a\nACGT\n>b\nGGA\n",            # UTF-8 byte-order mark
    b"\n\n  \n>a\nACGT\n>b\nGGA\n",                # blank lines first
    b">a\rACGT\r>b\rGGA\r",                        # old Mac line ends (CR only)
    b">a\r\nAC\r\nGT\r\n>b\r\nGGA\r\n",            # Windows line ends
    gzip.compress(b"\xef\xbb\xbf\r\n>a\r\nACGT\r\n>b\r\nGGA\r\n", mtime=0),  # gzip; mtime 0 keeps the clock out of the test id (xdist workers must agree)
])
def test_fasta_quirks_are_read(tmp_path, data):
    records = load(_write(tmp_path, data))
    assert [(r.id, r.text) for r in records] == [("a", "ACGT"), ("b", "GGA")]


@pytest.mark.parametrize("data,expected", [
    (b";comment\n>a\nACGT\n", "line 1: ';' comment lines are not read"),
    (b">a\nAC\n;comment\nGT\n", "line 3: ';' comment lines are not read"),
    (b"ACGT\n>a\nACGT\n", "line 1: expected a '>' header line, found 'ACGT'"),
    (b"\n\nhello\n", "line 3: expected a '>' header line"),
    (b">a\nACG\xce\x94T\n", "record 'a' position 4: invalid character '\u0394' (U+0394, not ASCII"),
    (b">a\nACGT\n>b\nAC\xffG\n",
     "record 'b' position 3: invalid character '\xff' (U+00FF, not ASCII"),
    (b"\xff\xfe>\x00a\x00", "is UTF-16 text"),
])
def test_fasta_problems_are_one_line(tmp_path, data, expected):
    path = _write(tmp_path, data)
    with pytest.raises(SequenceError) as err:
        load(path)
    message = str(err.value)
    assert expected in message and "\n" not in message and message.startswith(str(path))


def test_fasta_problem_through_the_cli(tmp_path):
    path = _write(tmp_path, b";old style\n>a\nACGT\n")
    line = one_line_error(run("kdiff", path, "ACGT", "-k", "1"))
    assert "comment lines" in line and "SeqIO" not in line and "fasta-pearson" not in line


def test_non_ascii_in_genbank_is_located(tmp_path):
    path = _write(tmp_path, b"LOCUS       x   8 bp    DNA     linear   UNK 01-JAN-1980\n"
                            b"ORIGIN\n        1 acg\xcetacgt\n//\n", "in.gb")
    with pytest.raises(SequenceError, match=r"in.gb: line 3: invalid character 'Î'"):
        load(path)


@pytest.mark.parametrize("literal,expected", [
    ("ACGT-ACGT", "position 5: invalid character '-' (a gap character"),
    ("ACGT ACGT", "position 5: invalid character ' ' (white space)"),
    ("ACGT1", "position 5: invalid character '1' (a digit)"),
    ("", "'' is an empty sequence"),
    ("ACGTÄ", "position 5: invalid character 'Ä'"),
])
def test_a_literal_that_is_not_a_sequence_says_where(tmp_path, literal, expected):
    line = one_line_error(run("kdiff", literal, "ACGT", "-k", "1", cwd=tmp_path))
    assert expected in line and "no such file" not in line and "directory" not in line


def test_a_missing_file_is_still_a_missing_file(tmp_path):
    assert "reads.fa: no such file" in one_line_error(run("kdiff", "reads.fa", "ACGT", "-k", "1",
                                                          cwd=tmp_path))


def test_a_file_named_like_a_literal_is_read_with_a_warning(tmp_path):
    (tmp_path / "ACGT").write_text(">f\nGGGGCC\n")
    done = run("kdiff", "ACGT", "GGGG", "-k", "1", "--strands", "forward", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("primerscope: warning: ACGT: read as the file")
    assert len(done.stderr.splitlines()) == 1 and "f,5,5,1,C" in done.stdout


def test_duplicate_ids_are_made_unique_with_a_warning(tmp_path):
    path = _write(tmp_path, b">x\nACGT\n>y\nACGT\n>x\nGG\n>x\nTT\n>x_2 taken\nAA\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = load(path)
    assert [r.id for r in records] == ["x", "y", "x_3", "x_4", "x_2"]
    assert [r.description for r in records][-1] == "taken"  # the title after its id
    assert len(caught) == 1 and issubclass(caught[0].category, SequenceWarning)
    assert "duplicate record ids" in str(caught[0].message)


def test_duplicate_ids_in_the_cli_output_rows(tmp_path):
    path = _write(tmp_path, b">dup\nACGTTT\n>dup\nACGTTA\n")
    done = run("kdiff", path, "ACGT", "-k", "1", "--strands", "forward")
    assert done.returncode == 0, done.stderr
    ids = {row.split(",")[0] for row in done.stdout.splitlines()[1:]}
    assert ids == {"dup", "dup_2"}
    assert done.stderr.strip().splitlines() == [
        f"primerscope: warning: {path}: duplicate record ids made unique (dup -> dup_2)"]
