"""to_pandas(coords=...) and to_records() on every result type (issue #31, item 3).

``one-based`` is the CSV's 1-based inclusive convention; ``bed`` puts ``chrom, start, end``
(0-based, half-open) first, so that hits drop into pyranges or bioframe. Checked on each
family's answer against its own rows: the same intervals, shifted by exactly one at the
start, and the same other columns.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import engine

ROOT = Path(__file__).resolve().parents[2]
LAMBDA = engine.load(ROOT / "resources" / "demo" / "lambda_NC_001416.fa")[0].text
TEXT = LAMBDA[1000:1600]


def _results():
    """(name, result, (id column, start column, end column) in one-based rows)."""
    from engine.sequences import decode, encode, reverse_complement

    p1, p2 = LAMBDA[1010:1030], decode(reverse_complement(encode(LAMBDA[1380:1400])))
    yield "kdiff", engine.kdiff.solve(TEXT[:80], LAMBDA[5000:5600], 2, backend="serial"), \
        ("target_id", "start", "end")
    yield "kmismatch", engine.kmismatch.solve([LAMBDA[1100:1120]], TEXT, 3, backend="serial"), \
        ("record_id", "start", "end")
    yield "edit", engine.edit.solve([LAMBDA[1100:1120]], TEXT, mode="search", k=1,
                                    backend="serial"), ("record_id", "start", "end")
    yield "lcs", engine.lcs.solve(TEXT[:60], LAMBDA[1010:1070], backend="serial"), \
        ("a_id", "a_pos", "a_pos")
    yield "nw", engine.nw.solve(TEXT[:60], LAMBDA[1010:1070], backend="serial"), \
        ("a_id", "a_start", "a_end")
    yield "pcr", engine.pcr.solve([p1, p2], TEXT, backend="serial"), ("record", "start", "end")
    yield "pairs", engine.pairs.solve(LAMBDA[20000:20400], LAMBDA[30000:33000], 3,
                                      backend="serial"), ("target", "left_start", "right_end")
    yield "offtarget", engine.offtarget.solve(LAMBDA[1100:1120], TEXT, 2, backend="serial"), \
        ("record_id", "start", "end")


RESULTS = None


def results():
    global RESULTS
    if RESULTS is None:
        RESULTS = list(_results())
    return RESULTS


@pytest.mark.parametrize("index", range(8))
def test_bed_is_one_based_shifted_by_one_at_the_start(index):
    name, result, (rid, start, end) = results()[index]
    rows = result.to_records()
    bed = result.to_records(coords="bed")
    assert rows and len(rows) == len(bed), name
    for row, interval in zip(rows, bed):
        assert list(interval)[:3] == ["chrom", "start", "end"], name
        assert (interval["chrom"], interval["start"], interval["end"]) == (
            row[rid], row[start] - 1, row[end]), name
        others = {k: v for k, v in row.items() if k not in (rid, start, end)}
        for key, value in others.items():
            if key in interval and key.endswith(("_start", "_pos")) and value is not None:
                assert interval[key] == value - 1, (name, key)
            elif key in interval:
                assert interval[key] == value, (name, key)


@pytest.mark.parametrize("index", range(8))
def test_pandas_holds_the_records(index):
    name, result, _ = results()[index]
    for coords in ("one-based", "bed"):
        frame = result.to_pandas(coords=coords)
        assert isinstance(frame, pd.DataFrame)
        rows = result.to_records(coords=coords)
        assert list(frame.columns) == list(rows[0]), name
        got = frame.astype(object).where(frame.notna(), None).to_dict("records")
        assert [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()}
                for r in got] == rows, (name, coords)


def test_rows_match_the_family_objects():
    """The records are the family's own rows (a hit's fields), not a new reading of them."""
    res = engine.kmismatch.solve([LAMBDA[1100:1120]], TEXT, 3, backend="serial")
    assert [(r["record_id"], r["start"], r["end"], r["strand"], r["mismatches"])
            for r in res.to_records()] == [(h.record_id, h.start, h.end, h.strand, h.mismatches)
                                           for h in res.hits]


@pytest.mark.parametrize("with_sequence", [False, True])
def test_pcr_frame_has_the_csv_columns(with_sequence):
    """to_pandas had record_id for the CSV's record, no length and an object spans_gap."""
    import io

    from engine.primers import export_pcr
    from engine.sequences import decode, encode, reverse_complement

    p1, p2 = LAMBDA[1010:1030], decode(reverse_complement(encode(LAMBDA[1380:1400])))
    res = engine.pcr.solve([p1, p2], TEXT, engine.pcr.PcrSettings(with_sequence=with_sequence),
                           backend="serial")
    out = io.StringIO()
    export_pcr.write_csv(res, out)
    header, *rows = out.getvalue().splitlines()
    frame = res.to_pandas()
    assert list(frame.columns) == header.split(",") and rows
    assert [",".join(map(str, r.values())) for r in res.to_records()] == rows
    assert str(frame["spans_gap"].dtype) == "bool" and str(frame["length"].dtype) == "int64"
    assert (frame["length"] == frame["end"] - frame["start"] + 1).all()


def test_offtarget_sites_are_a_list_with_the_csv_columns():
    """offtarget.solve gave a plain list (no to_pandas); it is still one, with the CSV's
    columns and int64 numbers, also when no site is found."""
    import io

    from engine.jobs import drive
    from engine.primers import offtarget

    primer = LAMBDA[1100:1120]
    res = engine.offtarget.solve(primer, TEXT, 2, backend="serial")
    assert isinstance(res, list) and res == list(res) and res
    out = io.StringIO()
    job = offtarget.make_job(primer, TEXT, 2, backend="serial")
    offtarget.write_csv(drive(engine.iter_solve(job)), out, primer=primer)
    header, *rows = out.getvalue().splitlines()
    assert list(res.to_pandas().columns) == header.split(",") == list(offtarget.CSV_COLUMNS)
    assert [",".join(map(str, r.values())) for r in res.to_records()] == rows
    none = engine.offtarget.solve("ACGTACGTACGTACGTACGT", "T" * 200, 1, backend="serial")
    assert none == [] and none.to_records() == []
    assert str(none.to_pandas()["start"].dtype) == "int64"


def test_panel_pairs_and_products():
    from engine.sequences import decode, encode, reverse_complement

    p1, p2 = LAMBDA[1010:1030], decode(reverse_complement(encode(LAMBDA[1380:1400])))
    res = engine.panel.solve([p1, p2], TEXT, backend="serial")
    pairs = res.to_records()
    assert [(r["primer_a"], r["primer_b"]) for r in pairs] == [
        ("seq1", "seq1"), ("seq1", "seq2"), ("seq2", "seq2")]
    with pytest.raises(ValueError, match="has no intervals"):
        res.to_pandas(coords="bed")
    products = res.to_records(table="products")
    assert [(p["record_id"], p["start"], p["end"]) for p in products] == [
        (p.record_id, p.start, p.end) for p in res.products]
    assert [p["start"] for p in res.to_records("bed", table="products")] == [
        p.start - 1 for p in res.products]


def test_global_edit_distances_and_lcs_length_are_one_based_only():
    res = engine.edit.solve(["ACGT", "AGT"], ["ACCGT"], backend="serial")
    assert res.to_records() == [
        {"pattern_id": "seq1", "record_id": "seq1", "distance": 1, "cigar": None},
        {"pattern_id": "seq2", "record_id": "seq1", "distance": 2, "cigar": None}]
    assert str(res.to_pandas()["distance"].dtype) == "Int64"
    with pytest.raises(ValueError, match="has no intervals"):
        res.to_records(coords="bed")
    length = engine.lcs.solve("ACGT", "AGT", task="length", backend="serial")
    assert length.to_records() == [{"a_id": "seq1", "b_id": "seq1", "a_length": 4,
                                    "b_length": 3, "length": 3}]


def test_an_unknown_convention_is_refused():
    res = engine.kmismatch.solve(["ACGT"], "ACGTACGT", 0, backend="serial")
    with pytest.raises(ValueError, match="coords must be one of one-based, bed"):
        res.to_pandas(coords="zero-based")
