"""A fuzzer for the primer library (issue #34): names, sequences, numbers and CSV imports
from hypothesis, each against the library's stated rules (an independent oracle here), and
concurrent writers that start together on a real handshake (no sleep).

A case either does what the rules say or is refused with a ValueError of one line; it
never raises anything else (OverflowError, csv.Error, sqlite3 errors) and a refused
change leaves the library as it was.
"""

from __future__ import annotations

import math
import string
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engine.primers.library import COLUMNS, Library, LibraryEntry, parse_csv
from tests.engine.primers.test_library import DNA, dna

ROOT = Path(__file__).resolve().parents[3]
IUPAC = "ACGTURYSWKMBDHVNacgturyswkmbdhvn"
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
#: Cases that make SQLite files (each commit syncs to disk: ~10 ms on CI's disks).
FUZZ_DB = settings(FUZZ, max_examples=min(settings().max_examples, 30))


def _name_rule(name: str) -> str | None:
    """The documented rule: NFKC, stripped, then printable ASCII; None: refused."""
    text = unicodedata.normalize("NFKC", name).strip()
    if not text or any(not 32 <= ord(c) <= 126 for c in text):
        return None
    return text


def _sequence_rule(seq: str) -> str | None:
    text = seq.strip()
    if not text or any(c not in IUPAC for c in text) or len(text) > 100:
        return None
    return text.upper().replace("U", "T")


@pytest.fixture
def library(tmp_path):
    with Library(tmp_path / "lib.sqlite") as lib:
        yield lib


def _one_line(exc: Exception) -> None:
    assert type(exc) is ValueError and "\n" not in str(exc) and str(exc)


names = st.one_of(st.text(max_size=30),
                  st.text(alphabet=string.printable, max_size=30),
                  st.sampled_from(["=HYPERLINK(1)", "\x1b[31mred", "\u0410B", "\uff21\uff22",
                                   " ", "ﬁ", "A\u200bB", "+1", "-x", "@y", "a\tb", "é"]))
sequences = st.one_of(st.text(alphabet=IUPAC, max_size=120),
                      st.text(max_size=20), st.sampled_from(["", " ", "AC-GT", "ACGT\x00"]))
numbers = st.one_of(st.none(), st.integers(), st.integers(-10, 10**13), st.booleans(),
                    st.floats(allow_nan=True, allow_infinity=True))


@FUZZ
@given(name=names, seq=sequences)
def test_names_and_sequences_follow_the_rules(library, name, seq):
    before = library.entries()
    want_name, want_seq = _name_rule(name), _sequence_rule(seq)
    taken = want_name is not None and library.get(want_name) is not None
    held = any(e.sequence == want_seq for e in before)  # one sequence, one name
    try:
        added = library.add(LibraryEntry(name, seq))
    except ValueError as exc:
        _one_line(exc)
        assert want_name is None or want_seq is None or taken or held, (name, seq, exc)
        assert library.entries() == before
        return
    assert not held
    assert (added.name, added.sequence) == (want_name, want_seq)
    assert library.get(want_name).sequence == want_seq


@FUZZ
@given(start=numbers, end=numbers, k=numbers, tm=numbers, gc=numbers)
def test_numbers_are_stored_or_refused_never_overflow(library, start, end, k, tm, gc):
    def int_ok(v):
        return v is None or (type(v) is int and 1 <= v <= 10**12)

    def float_ok(v, low, high):
        return v is None or (type(v) in (int, float) and math.isfinite(v) and low <= v <= high)

    ok = (all(int_ok(v) for v in (start, end, k)) and float_ok(tm, -50, 150)
          and float_ok(gc, 0, 100)
          and (start is None or end is None or end >= start))
    entry = LibraryEntry(f"p{len(library)}", dna(len(library)), target_start=start, target_end=end,
                         k=k, tm=tm, gc_percent=gc)
    try:
        library.add(entry)
    except ValueError as exc:
        _one_line(exc)
        assert not ok, (start, end, k, tm, gc, exc)
        return
    assert ok
    stored = library.get(entry.name)
    assert (stored.target_start, stored.target_end, stored.k) == (start, end, k)


cells = st.one_of(st.text(max_size=12), st.sampled_from(["=1+1", "-2", "@A", "+x", "'=y", "a,b",
                                                          'q"uote', "line\nbreak", ""]))


@FUZZ_DB
@given(rows=st.lists(st.tuples(names, st.text(alphabet="ACGT", min_size=1, max_size=30), cells,
                               cells), min_size=1, max_size=8))
def test_an_export_imports_back_unchanged(tmp_path_factory, rows):
    """Whatever the names and notes (formula-like ones included), a library's CSV export
    imports into a new library as the same entries."""
    folder = tmp_path_factory.mktemp("roundtrip")
    with Library(folder / "a.sqlite") as a:
        for name, seq, notes, target in rows:
            try:
                a.add(LibraryEntry(name, seq, notes=notes, target_id=target))
            except ValueError as exc:
                _one_line(exc)
        assume(len(a))
        text = a.csv_text()
        with Library(folder / "b.sqlite") as b:
            assert b.import_csv(text) == len(a)
            assert b.entries() == a.entries()


@FUZZ
@given(text=st.one_of(st.text(max_size=300),
                      st.builds(lambda h, body: h + body,
                                st.sampled_from(["name,sequence\n", "name,sequence,k,tm\n",
                                                 "Name,Sequence,notes\n"]),
                                st.text(alphabet="ACGTacgt,\n\"'=-@ 0123456789.eE+x\x00",
                                        max_size=300))))
def test_any_csv_imports_or_is_refused_in_one_line(library, text):
    before = library.entries()
    try:
        entries = parse_csv(text, "fuzz.csv")
    except ValueError as exc:
        _one_line(exc)
        assert str(exc).startswith("fuzz.csv")
        return
    try:
        n = library.import_csv(text, "fuzz.csv")
    except ValueError as exc:  # a name or a sequence already taken, or one given twice
        _one_line(exc)
        assert library.entries() == before
        return
    assert n == len(entries) and len(library) == len(before) + n
    assert set(COLUMNS) >= {"name", "sequence"}


#: A writer process: opens the library, says "ready", waits for "go" on its standard input
#: (the parent sends it once every writer is ready), then adds its primers one
#: transaction each and says "done".
WRITER = DNA + """
import sys
from engine.primers.library import Library, LibraryEntry
path, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
lib = Library(path)
print("ready", flush=True)
assert sys.stdin.readline().strip() == "go"
for i in range(n):
    lib.add(LibraryEntry(f"{prefix}{i}", dna(int(prefix[1:-1]) * 1000 + i), notes=prefix))
print("done", flush=True)
"""


@pytest.mark.parametrize("writers,each", [(2, 60), (4, 25)])
def test_concurrent_writers_keep_every_row(tmp_path, writers, each):
    path = tmp_path / "lib.sqlite"
    Library(path).close()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"w{w}_", str(each)],
                              cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in range(writers)]
    try:
        for p in procs:  # the handshake: every writer holds its connection before any writes
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0 and out.strip() == "done", err
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    with Library(path, readonly=True) as lib:
        names = [e.name for e in lib.entries()]
    assert sorted(names) == sorted(f"w{w}_{i}" for w in range(writers) for i in range(each))
