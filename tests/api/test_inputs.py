"""Every public entry point takes each input form and gives the same answer (issue #31).

The forms: a str, a list of str (ids seq1, seq2...), a Biopython SeqRecord or a list of
them, a path (str or Path) to a FASTA file or a genome store, and Records. Each test
varies one argument's form over all of them, on real DNA (lambda), and compares the
whole answer (to_records) with the one the Records give.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord

import engine
from engine.sequences import Record, decode, encode, reverse_complement

ROOT = Path(__file__).resolve().parents[2]
LAMBDA = engine.load(ROOT / "resources" / "demo" / "lambda_NC_001416.fa")[0].text
TEXT = LAMBDA[1000:1600]
PATTERNS = [LAMBDA[1100:1120], LAMBDA[1400:1420]]
#: a forward primer and a reverse one (the reverse complement of lambda 1381-1400)
PRIMER_PAIR = [LAMBDA[1010:1030], decode(reverse_complement(encode(LAMBDA[1380:1400])))]


def _one_forms(text: str, tmp_path: Path, name: str) -> dict:
    """One sequence, named seq1, in every form."""
    path = tmp_path / f"{name}.fa"
    path.write_text(f">seq1\n{text}\n")
    store = tmp_path / f"{name}.psg"
    engine.index(path, store)
    rec = Record("seq1", encode(text))
    return {"str": text, "list of str": [text], "SeqRecord": SeqRecord(Seq(text), id="seq1"),
            "list of SeqRecord": [SeqRecord(Seq(text), id="seq1")], "path str": str(path),
            "Path": path, "genome store": store, "Record": rec, "list of Record": [rec]}


def _many_forms(texts: list[str], tmp_path: Path, name: str) -> dict:
    """Several sequences, named seq1, seq2..., in every form that holds several."""
    path = tmp_path / f"{name}.fa"
    path.write_text("".join(f">seq{i}\n{t}\n" for i, t in enumerate(texts, start=1)))
    recs = [Record(f"seq{i}", encode(t)) for i, t in enumerate(texts, start=1)]
    return {"list of str": list(texts),
            "list of SeqRecord": [SeqRecord(Seq(t), id=f"seq{i}")
                                  for i, t in enumerate(texts, start=1)],
            "path str": str(path), "Path": path, "list of Record": recs,
            "tuple of mixed": (texts[0], recs[1]) if len(texts) == 2 else tuple(recs)}


def _same_for_every_form(forms: dict, run) -> None:
    want = run(forms["list of Record"])
    assert want, "the check needs a non-empty answer"
    for form, value in forms.items():
        assert run(value) == want, form


def test_kmismatch(tmp_path):
    texts = _one_forms(TEXT, tmp_path, "text")
    _same_for_every_form(texts, lambda t: engine.kmismatch.solve(
        PATTERNS, t, 2, backend="serial").to_records())
    patterns = _many_forms(PATTERNS, tmp_path, "patterns")
    _same_for_every_form(patterns, lambda p: engine.kmismatch.solve(
        p, TEXT, 2, backend="serial").to_records())
    one = _one_forms(PATTERNS[0], tmp_path, "pattern")
    del one["genome store"]  # (a store is for texts and backgrounds)
    _same_for_every_form(one, lambda p: engine.kmismatch.solve(
        p, TEXT, 2, backend="serial").to_records())


def test_kdiff(tmp_path):
    background = LAMBDA[3000:3400] + TEXT[100:160]
    for role, forms in (("target", _one_forms(TEXT[:120], tmp_path, "target")),
                        ("background", _one_forms(background, tmp_path, "background"))):
        def run(value, role=role):
            args = {"target": TEXT[:120], "background": background, role: value}
            return engine.kdiff.solve(args["target"], args["background"], 2,
                                      backend="serial").to_records()

        _same_for_every_form(forms, run)


def test_edit_search_and_global(tmp_path):
    texts = _one_forms(TEXT, tmp_path, "text")
    _same_for_every_form(texts, lambda t: engine.edit.solve(
        PATTERNS, t, mode="search", k=1, backend="serial").to_records())
    _same_for_every_form(_many_forms(PATTERNS, tmp_path, "patterns"),
                         lambda p: engine.edit.solve(p, TEXT[95:130], backend="serial")
                         .to_records())


def test_edit_distance_and_verify(tmp_path):
    a, b = PATTERNS[0], LAMBDA[1098:1121]
    forms = _one_forms(a, tmp_path, "a")
    del forms["genome store"]
    _same_for_every_form(forms, lambda v: [engine.edit.distance(v, b, backend="serial")])
    _same_for_every_form(forms, lambda v: engine.edit.verify(v, b, 3, backend="serial")
                         .to_records())


def test_lcs_and_nw(tmp_path):
    a, b = TEXT[:150], LAMBDA[1005:1140]
    for name, forms in (("a", _one_forms(a, tmp_path, "a")), ("b", _one_forms(b, tmp_path, "b"))):
        def lcs(value, name=name):
            x, y = (value, b) if name == "a" else (a, value)
            return engine.lcs.solve(x, y, backend="serial").to_records()

        def nw(value, name=name):
            x, y = (value, b) if name == "a" else (a, value)
            return engine.nw.solve(x, y, backend="serial").to_records()

        _same_for_every_form(forms, lcs)
        _same_for_every_form(forms, nw)
        _same_for_every_form(forms, lambda v, name=name: [
            engine.lcs.length(v, b, backend="serial") if name == "a" else
            engine.nw.score(a, v, backend="serial")])


def test_pcr_panel_and_offtarget(tmp_path):
    background = _one_forms(TEXT, tmp_path, "background")
    primers = PRIMER_PAIR
    _same_for_every_form(background, lambda bg: engine.pcr.solve(
        primers, bg, backend="serial").to_records())
    _same_for_every_form(_many_forms(primers, tmp_path, "primers"), lambda p: engine.pcr.solve(
        p, TEXT, backend="serial").to_records())
    _same_for_every_form(background, lambda bg: engine.panel.solve(
        primers, bg, backend="serial").to_records(table="products"))
    one = _one_forms(PATTERNS[0], tmp_path, "primer")
    del one["genome store"]
    _same_for_every_form(one, lambda p: engine.offtarget.find_offtargets(
        p, TEXT, 2, backend="serial"))
    _same_for_every_form(background, lambda bg: engine.offtarget.solve(
        PATTERNS[0], bg, 2, backend="serial"))


def test_pairs(tmp_path):
    target = LAMBDA[20000:20400]
    background = LAMBDA[30000:34000]
    forms = _one_forms(target, tmp_path, "target")
    want = engine.pairs.solve(forms["Record"], background, 3, backend="serial").to_records()
    assert want
    for form in ("SeqRecord", "genome store"):  # (each run starts Primer3's process: a few)
        assert engine.pairs.solve(forms[form], background, 3,
                                  backend="serial").to_records() == want, form


def test_unnamed_seqrecords_and_strings_are_numbered():
    recs = engine.api.records([SeqRecord(Seq("ACGT")), "GGCC", Seq("TTAA")], "x")
    assert [r.id for r in recs] == ["seq1", "seq2", "seq3"]
    assert [r.text for r in recs] == ["ACGT", "GGCC", "TTAA"]


@pytest.mark.parametrize("bad", [42, 3.5, b"ACGT", {"a": "ACGT"}, [None]])
def test_a_form_that_is_none_of_them_is_refused_by_name(bad):
    with pytest.raises(TypeError, match="must be a sequence string, a file path"):
        engine.kmismatch.make_job(["ACGT"], bad, 1)


def test_a_missing_file_and_a_bad_literal_say_so():
    with pytest.raises(ValueError, match="no such file"):
        engine.kmismatch.make_job("ACGT", "missing/lambda.fa", 1)
    with pytest.raises(ValueError, match="not a sequence"):
        engine.kmismatch.make_job("ACGT", "ACGT-ACGT", 1)


def test_soft_masking_of_a_seqrecord_is_kept():
    rec = engine.api.records(SeqRecord(Seq("ACgtAC"), id="x"), "t")[0]
    starts, ends = rec.soft_mask
    assert (starts.tolist(), ends.tolist()) == ([2], [4])
    assert np.array_equal(rec.codes, encode("ACGTAC"))
