"""Pairwise text (EMBOSS pair layout) and the CSV of columns."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from engine import nw
from engine.nw.alignment import OP_I, OP_M, build
from engine.nw import export
from engine.nw.export import column_rows, pairwise_text, write_columns_csv
from engine.sequences import encode


def _example():
    a, b = encode("ACGTNACGT"), encode("ACTTAACGGT")
    ops = np.array([OP_M, OP_M, OP_M, OP_M, OP_M, OP_I, OP_M, OP_M, OP_M, OP_M], dtype=np.uint8)
    return a, b, build(a, b, ops)


def test_alignment_columns_cigar_identity_and_path():
    a, b, al = _example()
    assert al.aligned_a == "ACGTN-ACGT" and al.aligned_b == "ACTTAACGGT"
    # N against A matches (the sets intersect); G/T, A/C and C/G mismatch.
    assert al.cigar == "2=1X2=1I2X2="
    assert (al.matches, al.mismatches, al.gaps) == (6, 3, 1) and al.identity == 0.6
    assert al.path.tolist()[:3] == [[0, 0], [1, 1], [2, 2]] and al.path.tolist()[-1] == [9, 10]


def test_csv_of_columns():
    _, _, al = _example()
    buf = io.StringIO()
    write_columns_csv(al, buf)
    rows = list(csv.reader(io.StringIO(buf.getvalue())))
    assert rows[0] == ["column", "a_pos", "b_pos", "a", "b", "op"]
    assert rows[5] == ["5", "5", "5", "N", "A", "="]
    assert rows[6] == ["6", "", "6", "-", "A", "I"]
    assert rows[10] == ["10", "9", "10", "T", "T", "="]
    assert len(list(column_rows(al))) == al.columns


def test_pairwise_text_blocks_of_60_with_positions_and_bars():
    a = encode("A" * 70 + "CCCC")
    b = encode("A" * 70 + "GG")
    res = nw.solve([_rec(a, "first_sequence_id_long")], [_rec(b, "second")], backend="serial")
    text = pairwise_text(res.alignment, a_id="first_sequence_id_long", b_id="second",
                         score=res.score, match=1, mismatch=0, gap=-1)
    lines = text.splitlines()
    assert "# Length: 74" in lines and "# Score: 68" in lines
    assert "# Identity:     70/74 (94.6%)" in lines and "# Gaps:         2/74 (2.7%)" in lines
    blocks = [k for k, line in enumerate(lines) if line.startswith("first_sequenc ")]
    assert len(blocks) == 2
    first, bars, second = lines[blocks[0]:blocks[0] + 3]
    assert first == "first_sequenc      1 " + "A" * 60 + "     60"
    assert bars == " " * 21 + "|" * 60
    assert second == "second             1 " + "A" * 60 + "     60"
    first, bars, second = lines[blocks[1]:blocks[1] + 3]
    assert first.startswith("first_sequenc     61 AAAAAAAAAA") and first.endswith("     74")
    assert second.split()[1] == "61" and second.split()[-1] == "72"
    assert bars[:31] == " " * 21 + "|" * 10 and sorted(bars[31:]) == [" ", " ", ".", "."]


def test_write_csv_layouts_are_the_two_writers():
    res = nw.solve([_rec(encode("ACGTTGCA"), "a")], [_rec(encode("TTGCAACG"), "b")],
                   backend="serial")
    columns, pairwise = io.StringIO(), io.StringIO()
    export.write_csv(res, columns)   # the CSV of columns unless told otherwise
    export.write_csv(res, pairwise, layout="pairwise")
    direct = io.StringIO()
    write_columns_csv(res.alignment, direct)
    assert columns.getvalue() == direct.getvalue()
    assert pairwise.getvalue() == export.result_text(res)
    with pytest.raises(ValueError, match="layout"):
        export.write_csv(res, io.StringIO(), layout="fasta")
    assert export.to_json(res)["cigar"] == res.alignment.cigar


def _rec(codes, name):
    from engine.sequences import Record

    return Record(name, codes)


def test_the_documented_examples_hold():
    import doctest

    import engine.nw

    failures, tried = doctest.testmod(engine.nw)
    assert tried >= 3 and failures == 0
