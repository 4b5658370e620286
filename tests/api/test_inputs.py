"""Every public function takes each input form and gives the same answer (issue #31).

The forms (``ONE_FORMS``): a str, a list of str (ids seq1, seq2...), a Biopython SeqRecord
or a list of them, a path (str or Path) to a FASTA file, a genome store (.psg), a Record or
a list of them. ``CASES`` is the table: each public function, each of its sequence
arguments, and what its answer is; every argument is given one sequence in each of the nine
forms, and the several-sequence arguments (patterns, texts, primers) several sequences in
each form that holds several. Each answer is compared whole with the one a list of Records
gives, on real DNA (lambda). ``test_the_table_is_every_public_function`` finds the public
functions from the modules' ``__all__``: a new one without its rows fails there.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord

import engine
from engine.jobs import drive
from engine.sequences import Record, decode, encode, reverse_complement

ROOT = Path(__file__).resolve().parents[2]
LAMBDA = engine.load(ROOT / "resources" / "demo" / "lambda_NC_001416.fa")[0].text
TEXT = LAMBDA[1000:1600]
PATTERNS = [LAMBDA[1100:1120], LAMBDA[1400:1420]]
#: a forward primer and a reverse one (the reverse complement of lambda 1381-1400)
PRIMER_PAIR = [LAMBDA[1010:1030], decode(reverse_complement(encode(LAMBDA[1380:1400])))]
#: one primer that primes both ends: the text ends in its reverse complement
ONE_PRIMER_TEXT = TEXT + decode(reverse_complement(encode(PRIMER_PAIR[0])))
KDIFF_BACKGROUND = LAMBDA[3000:3400] + TEXT[100:160]
A, B = TEXT[:150], LAMBDA[1005:1140]
PAIRS_TARGET, PAIRS_BACKGROUND = LAMBDA[20000:20400], LAMBDA[30000:31000]

ONE_FORMS = ("str", "list of str", "SeqRecord", "list of SeqRecord", "path str", "Path",
             "genome store", "Record", "list of Record")
#: The forms of several sequences (a str, a SeqRecord and a Record hold one).
SEVERAL_FORMS = ("list of str", "list of SeqRecord", "path str", "Path", "genome store",
                 "list of Record", "tuple of mixed")
#: The family and tool modules whose public functions take sequences (engine's top level).
MODULES = ("kdiff", "kmismatch", "lcs", "edit", "nw", "pairs", "pcr", "panel", "offtarget")
#: The argument names that hold sequences.
SEQUENCE_ARGUMENTS = {"target", "background", "patterns", "text", "texts", "a", "b", "primers",
                      "primer", "candidate", "queries", "regions"}
#: Public functions whose sequence-named arguments are not a user's input, and why.
NOT_INPUTS = {"pcr.pair_sites": "background is the records a PcrSites was found in (its "
                                "record indices point into them); primers are names",
              "offtarget.write_csv": "primer is the report's text for a result made already",
              "offtarget.to_json": "primer is the report's text for a result made already"}


def _forms(texts: list[str], tmp_path: Path, name: str) -> dict:
    """``texts`` (named seq1, seq2...) in every form that holds that many sequences."""
    path = tmp_path / f"{name}.fa"
    path.write_text("".join(f">seq{i}\n{t}\n" for i, t in enumerate(texts, start=1)))
    store = engine.index(path, tmp_path / f"{name}.psg")
    recs = [Record(f"seq{i}", encode(t)) for i, t in enumerate(texts, start=1)]
    seqrecords = [SeqRecord(Seq(t), id=f"seq{i}") for i, t in enumerate(texts, start=1)]
    forms = {"list of str": list(texts), "list of SeqRecord": seqrecords, "path str": str(path),
             "Path": path, "genome store": store, "list of Record": recs}
    if len(texts) == 1:
        forms |= {"str": texts[0], "SeqRecord": seqrecords[0], "Record": recs[0]}
    else:
        forms["tuple of mixed"] = (texts[0], *recs[1:])
    assert set(forms) == set(ONE_FORMS if len(texts) == 1 else SEVERAL_FORMS)
    return forms


def _inputs(job) -> dict:
    """A job's inputs as plain values: what each role's records hold."""
    return {role: [(r.id, r.offset, r.text) for r in value] for role, value in job.inputs.items()}


def _match(m) -> tuple:
    return (m.record_id, m.strand, m.start, m.end, m.distance, m.window, m.aligned_candidate,
            m.aligned_background, m.matrix.tolist())


def _landscape(land) -> dict:
    return {name: np.asarray(values).tolist() for name, values in land.frame_columns().items()}


@dataclass(frozen=True)
class Case:
    function: str  # "module.name", as engine exposes it
    argument: str
    texts: tuple[str, ...]  # the argument's sequences; every other argument is fixed
    run: Callable  # the argument's value -> a comparable answer


def _cases() -> list[Case]:
    kd, km, lcs, ed, nw = engine.kdiff, engine.kmismatch, engine.lcs, engine.edit, engine.nw
    pairs, pcr, panel, off = engine.pairs, engine.pcr, engine.panel, engine.offtarget
    serial = {"backend": "serial"}
    out = []

    def add(function, argument, texts, run):
        out.append(Case(function, argument, tuple(texts), run))

    def two(function, fixed: dict, call, texts: dict):
        """Rows for a function of two sequence arguments: each varied, the other fixed."""
        for argument in fixed:
            def run(value, argument=argument):
                return call(**{**fixed, argument: value})
            add(function, argument, texts.get(argument, [fixed[argument]]), run)

    kdiff_in = {"target": TEXT[:120], "background": KDIFF_BACKGROUND}
    two("kdiff.solve", kdiff_in, lambda **a: kd.solve(**a, k=2, **serial).to_records(), {})
    two("kdiff.make_job", kdiff_in, lambda **a: _inputs(kd.make_job(**a, k=2)), {})
    two("kdiff.landscape", kdiff_in,
        lambda **a: _landscape(kd.landscape(**a, k=3, **serial)), {})
    closest_in = {"candidate": LAMBDA[3100:3118], "background": KDIFF_BACKGROUND}
    two("kdiff.closest_match", closest_in,
        lambda **a: _match(kd.closest_match(**a, k=None)), {})
    two("kdiff.iter_closest_match", closest_in,
        lambda **a: _match(drive(kd.iter_closest_match(**a))), {})
    for patterns in ([PATTERNS[0]], PATTERNS):
        km_in = {"patterns": patterns, "text": TEXT}
        texts = {"patterns": patterns}
        two("kmismatch.solve", km_in, lambda **a: km.solve(**a, k=2, **serial).to_records(), texts)
        two("kmismatch.make_job", km_in, lambda **a: _inputs(km.make_job(**a, k=2)), texts)
        ed_in = {"patterns": patterns, "texts": TEXT}
        two("edit.solve", ed_in, lambda **a: ed.solve(**a, mode="search", k=1,
                                                      **serial).to_records(), texts)
        two("edit.make_job", ed_in, lambda **a: _inputs(ed.make_job(**a, mode="search", k=1)),
            texts)
    two("edit.distance", {"a": PATTERNS[0], "b": LAMBDA[1098:1121]},
        lambda **a: [ed.distance(**a, **serial)], {})
    two("edit.verify", {"queries": PATTERNS[0], "regions": LAMBDA[1098:1121]},
        lambda **a: ed.verify(**a, k=3, **serial).to_records(), {})
    ab = {"a": A, "b": B}
    two("lcs.solve", ab, lambda **a: lcs.solve(**a, **serial).to_records(), {})
    two("lcs.length", ab, lambda **a: [lcs.length(**a, **serial)], {})
    two("lcs.make_job", ab, lambda **a: _inputs(lcs.make_job(**a)), {})
    two("nw.solve", ab, lambda **a: nw.solve(**a, **serial).to_records(), {})
    two("nw.score", ab, lambda **a: [nw.score(**a, **serial)], {})
    two("nw.make_job", ab, lambda **a: _inputs(nw.make_job(**a)), {})
    # pairs: each solve starts a Primer3 process, so its rows compare the job solve makes
    # (make_job's inputs); test_pairs_solve runs solve itself on two forms.
    pairs_in = {"target": PAIRS_TARGET, "background": PAIRS_BACKGROUND}
    for name in ("pairs.solve", "pairs.make_job"):
        two(name, pairs_in, lambda **a: _inputs(pairs.make_job(**a, k=3)), {})
    for primers, text in (([PRIMER_PAIR[0]], ONE_PRIMER_TEXT), (PRIMER_PAIR, TEXT)):
        pp_in = {"primers": primers, "background": text}
        texts = {"primers": primers}
        two("pcr.solve", pp_in, lambda **a: pcr.solve(**a, **serial).to_records(), texts)
        two("pcr.make_job", pp_in, lambda **a: _inputs(pcr.make_job(**a)), texts)
        two("panel.solve", pp_in,
            lambda **a: panel.solve(**a, **serial).to_records(table="products"), texts)
        two("panel.make_job", pp_in, lambda **a: _inputs(panel.make_job(**a)), texts)
    off_in = {"primer": PATTERNS[0], "background": TEXT}
    two("offtarget.find_offtargets", off_in,
        lambda **a: off.find_offtargets(**a, max_edits=2, **serial), {})
    two("offtarget.make_job", off_in, lambda **a: _inputs(off.make_job(**a, max_edits=2)), {})
    return out


CASES = _cases()


def _public_functions() -> dict[str, list[str]]:
    """"module.name" -> its sequence arguments, for every public function of ``MODULES``
    (``__all__``, or the module's own functions where it has none); an alias (offtarget's
    ``solve = find_offtargets``) counts once, under its own name."""
    found = {}
    for module_name in MODULES:
        module = getattr(engine, module_name)
        names = getattr(module, "__all__", None) or [
            n for n, v in vars(module).items()
            if not n.startswith("_") and inspect.isfunction(v) and v.__module__ == module.__name__]
        for name in names:
            obj = getattr(module, name)
            if not inspect.isfunction(obj):
                continue
            arguments = [p for p in inspect.signature(obj).parameters if p in SEQUENCE_ARGUMENTS]
            if arguments:
                found[f"{module_name}.{obj.__name__}"] = arguments
    return found


def test_the_table_is_every_public_function():
    """Each public function that takes sequences has a row for each of its sequence
    arguments, and each argument is given in every form."""
    public = _public_functions()
    assert "kdiff.closest_match" in public and "offtarget.find_offtargets" in public
    for function in NOT_INPUTS:
        del public[function]
    forms_given = {}
    for case in CASES:
        forms_given.setdefault((case.function, case.argument), set()).update(
            ONE_FORMS if len(case.texts) == 1 else SEVERAL_FORMS)
    assert set(forms_given) == {(f, a) for f, args in public.items() for a in args}
    for key, forms in forms_given.items():
        assert set(ONE_FORMS) <= forms, key


@pytest.mark.parametrize("case", CASES,
                         ids=[f"{c.function}-{c.argument}-{len(c.texts)}" for c in CASES])
def test_every_form_gives_the_same_answer(case, tmp_path):
    forms = _forms(list(case.texts), tmp_path, case.argument)
    want = case.run(forms["list of Record"])
    assert want, "the check needs a non-empty answer"
    for form, value in forms.items():
        assert case.run(value) == want, form


def test_pairs_solve(tmp_path):
    """pairs.solve itself, on two forms besides Records (each run starts Primer3's process):
    the target as a SeqRecord, the background as a genome store. The other forms reach
    solve through make_job, whose inputs the table compares for all nine."""
    target = _forms([PAIRS_TARGET], tmp_path, "target")
    background = _forms([PAIRS_BACKGROUND], tmp_path, "background")
    want = engine.pairs.solve(target["Record"], background["Record"], 3,
                              backend="serial").to_records()
    assert want
    assert engine.pairs.solve(target["SeqRecord"], background["Record"], 3,
                              backend="serial").to_records() == want
    assert engine.pairs.solve(target["Record"], background["genome store"], 3,
                              backend="serial").to_records() == want


def test_unnamed_seqrecords_and_strings_are_numbered():
    recs = engine.api.records([SeqRecord(Seq("ACGT")), "GGCC", Seq("TTAA")], "x")
    assert [r.id for r in recs] == ["seq1", "seq2", "seq3"]
    assert [r.text for r in recs] == ["ACGT", "GGCC", "TTAA"]


@pytest.mark.parametrize("bad", [42, 3.5, b"ACGT", {"a": "ACGT"}, [None]])
def test_a_form_that_is_none_of_them_is_refused_by_name(bad):
    with pytest.raises(TypeError, match="must be a sequence string, a file path"):
        engine.kmismatch.make_job(["ACGT"], bad, 1)
    with pytest.raises(TypeError, match="background must be a sequence string, a file path"):
        engine.kdiff.closest_match("ACGT", bad)


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


def _primer_files(tmp_path: Path) -> dict:
    """The primer pair as the command line's PRIMERS forms beyond engine.api's."""
    (f, r), table, pairs_csv, js = PRIMER_PAIR, tmp_path / "p.csv", tmp_path / "pairs.csv", \
        tmp_path / "p.json"
    table.write_text(f"name,sequence\nF,{f}\nR,{r}\n")
    pairs_csv.write_text("target,rank,left_sequence,left_start,right_sequence,right_end\n"
                         f"lam,1,{f},1011,{r},1400\n")
    js.write_text(f'{{"primers": [{{"name": "F", "sequence": "{f}"}}, '
                  f'{{"name": "R", "sequence": "{r}"}}]}}')
    return {"literals": f"F={f},R={r}", "unnamed literals": f"{f},{r}", "csv": str(table),
            "pairs csv": str(pairs_csv), "json": str(js), "csv Path": table}


@pytest.mark.parametrize("form", ["literals", "unnamed literals", "csv", "pairs csv", "json",
                                  "csv Path"])
def test_pcr_and_panel_take_the_command_lines_primers(form, tmp_path, capsys):
    """``pcr.solve("F=...,R=...", bg)`` said "invalid character 'F'" and a primer CSV
    "unknown sequence format", while ``primerscope pcr`` took both: the API now reads
    them with the command line's reader, to the same products."""
    from engine.cli import main

    primers = _primer_files(tmp_path)[form]
    bg = tmp_path / "bg.fa"
    bg.write_text(f">lam\n{TEXT}\n")
    got = engine.pcr.solve(primers, str(bg), backend="serial").to_records()
    assert main(["pcr", str(primers), str(bg), "--backend", "serial", "--json",
                 "--no-progress"]) == 0
    assert got and got == json.loads(capsys.readouterr().out)["products"]
    assert [n for n, _ in engine.panel.solve(primers).primers] == [got[0]["forward"],
                                                                   got[0]["reverse"]]
