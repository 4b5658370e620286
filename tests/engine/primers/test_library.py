"""The primer library: survives kill -9 mid-write, concurrent writers keep every row, a bad
import changes nothing, exports (CSV, order sheet, GenBank) are right."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import inspect

import pytest

from engine.primers.library import COLUMNS, Library, LibraryEntry, default_path


def dna(n: int) -> str:
    """A 16-nt sequence of its own for each n (the library keeps a sequence once)."""
    return "".join("ACGT"[(n >> 2 * j) & 3] for j in range(16))


#: dna() for the child processes below.
DNA = inspect.getsource(dna)

ROOT = Path(__file__).resolve().parents[3]
BATCH = 400

#: A child that adds BATCH primers per transaction forever (until killed).
WRITER = DNA + f"""
import sys, itertools
from engine.primers.library import Library, LibraryEntry
lib = Library(sys.argv[1])
for b in itertools.count():
    lib.add_many(LibraryEntry(f"w{{b}}_{{i}}", dna(b * {BATCH} + i), notes="x" * 200)
                 for i in range({BATCH}))
    print(b, flush=True)
"""

#: A child that opens the library, says so on stdout and waits for a start file, then adds
#: N primers one transaction each; halfway it marks its own file and waits for the other's,
#: so the two are writing at once (neither ends before the other has begun).
RACER = DNA + """
import os, sys, time
from engine.primers.library import Library, LibraryEntry
path, prefix, n, go, other = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
lib = Library(path)
print("open", flush=True)
def wait_for(name):
    while not os.path.exists(name):
        time.sleep(0.005)
wait_for(go)
for i in range(n):
    if i == n // 2:
        open(go + "." + prefix, "w").close()
        wait_for(go + "." + other)
    lib.add(LibraryEntry(f"{prefix}{i}", dna(2 * i + (prefix == "b")), orientation="reverse"))
"""


def _child(code, *args):
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_add_list_remove(tmp_path):
    with Library(tmp_path / "lib.sqlite") as lib:
        e = lib.add(LibraryEntry("F1", "acgtuGCAAGGCTTAGCATG", "forward", "lambda", 101, 120, 5,
                                 "E. coli 536", 59.5, 50.0, "first"))
        assert e.sequence == "ACGTTGCAAGGCTTAGCATG" and e.created.endswith("Z")
        lib.add(LibraryEntry("R1", "GGCATCGATCGGCTAGCTAG"))
        assert [x.name for x in lib.entries()] == ["F1", "R1"]
        assert lib.get("F1") == e
        with pytest.raises(ValueError, match="already has a primer named 'F1'"):
            lib.add(LibraryEntry("F1", "ACGT"))
        lib.set_notes("R1", "check Tm")
        assert lib.get("R1").notes == "check Tm"
        assert lib.remove(["F1"]) == 1 and len(lib) == 1
        with pytest.raises(ValueError, match="no primer named 'nope'"):
            lib.remove(["R1", "nope"])
        assert len(lib) == 1  # all or nothing
        for bad, message in ((LibraryEntry("x", ""), "empty primer"),
                             (LibraryEntry("x", "A" * 101), "at most 100"),
                             (LibraryEntry("x", "ACGT-A"), "invalid character"),
                             (LibraryEntry("x", "ACGT", orientation="up"), "orientation")):
            with pytest.raises(ValueError, match=message):
                lib.add(bad)


def test_survives_kill_9_in_the_middle_of_writes(tmp_path):
    path = tmp_path / "lib.sqlite"
    for delay in (0.05, 0.4, 1.0):
        proc = _child(WRITER, path)
        assert proc.stdout.readline()  # at least one batch committed
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        db = sqlite3.connect(path)
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        db.close()
        with Library(path) as lib:
            names = [e.name for e in lib.entries()]
        assert names and len(names) % BATCH == 0  # whole transactions only
        batches = {n.split("_")[0] for n in names}
        assert all(sum(1 for n in names if n.startswith(b + "_")) == BATCH for b in batches)
        with Library(path) as lib:  # still writable
            lib.remove(names)


def test_two_writers_at_once_keep_every_row(tmp_path):
    path, go = tmp_path / "lib.sqlite", tmp_path / "go"
    Library(path).close()
    n = 150
    procs = [_child(RACER, path, prefix, n, go, other) for prefix, other in (("a", "b"), ("b", "a"))]
    for p in procs:  # both have opened the library (a handshake, not a guess of how long)
        assert p.stdout.readline() == "open\n", p.stderr.read()
    go.write_text("")
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    with Library(path) as lib:
        order = [e.name for e in lib.entries()]
    assert set(order) == {f"a{i}" for i in range(n)} | {f"b{i}" for i in range(n)}
    assert len(order) == 2 * n
    # They wrote at once: each one's first half was in before either's second half.
    first_half = {f"{w}{i}" for w in "ab" for i in range(n // 2)}
    assert set(order[:n // 2 * 2]) == first_half


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "engine.cli", "library", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)


def test_cli_contract_and_exports(tmp_path):
    db = tmp_path / "lib.sqlite"
    assert _cli("--library", db, "add", "--name", "F1", "--sequence", "ACGTTGCAAGGCTTAGCATG",
                "--orientation", "forward", "--target-id", "t", "--start", "4", "--end", "23",
                "-k", "5", "--notes", "hi").returncode == 0
    assert _cli("--library", db, "add", "--name", "R1", "--sequence",
                "GGCATCGATCGGCTAGCTAG").returncode == 0
    again = _cli("--library", db, "add", "--name", "myF", "--sequence", "acgttgcaaggcttagcatg")
    assert again.returncode == 2 and again.stderr.strip().splitlines() == [
        "primerscope: error: primer 'myF': the library already has its sequence, as 'F1' "
        "(one name per sequence)"]
    listed = _cli("--library", db, "list", "--json")
    payload = json.loads(listed.stdout)
    assert [p["name"] for p in payload["primers"]] == ["F1", "R1"]
    assert {"name", "sequence", "orientation", "target_id", "target_start", "target_end", "k",
            "background", "tm", "gc_percent", "notes", "created"} <= set(payload["primers"][0])
    assert payload["primers"][0]["tm"] == pytest.approx(59.48, abs=0.05)  # Primer3's Tm
    order = _cli("--library", db, "export", "--format", "order", "--scale", "100nm").stdout
    assert order.splitlines() == ["Name,Sequence,Scale,Purification",
                                  "F1,ACGTTGCAAGGCTTAGCATG,100nm,STD",
                                  "R1,GGCATCGATCGGCTAGCTAG,100nm,STD"]
    target = tmp_path / "t.fa"
    target.write_text(">t\nGGGACGTTGCAAGGCTTAGCATGTTTCTAGCTAGCCGATCGATGCCAAA\n")
    gb = tmp_path / "t.gb"
    assert _cli("--library", db, "export", "--format", "genbank", "--target", target,
                "-o", gb).returncode == 0
    from Bio import SeqIO

    rec = SeqIO.read(gb, "genbank")
    feats = [(f.type, int(f.location.start), int(f.location.end), f.location.strand,
              f.qualifiers["label"][0]) for f in rec.features]
    assert feats == [("primer_bind", 3, 23, 1, "F1"), ("primer_bind", 26, 46, -1, "R1")]
    csv_out = tmp_path / "lib.csv"
    assert _cli("--library", db, "export", "-o", csv_out).returncode == 0
    other = tmp_path / "other.sqlite"
    assert _cli("--library", other, "import", csv_out).returncode == 0
    with Library(db) as a, Library(other) as b:
        assert a.entries() == b.entries()
    rm = _cli("--library", db, "remove", "F1")
    assert rm.returncode == 0 and [p["name"] for p in json.loads(
        _cli("--library", db, "list", "--json").stdout)["primers"]] == ["R1"]


@pytest.mark.parametrize("text,message", [
    ("name,sequence,colour\nX,ACGT,red\n", "unknown column 'colour'"),
    ("name,notes\nX,hi\n", "no 'sequence' column"),
    ("name,sequence\nX,ACGT\nY,AC-GT\n", "line 3"),
    ("name,sequence\nX,ACGT\nX,GGCC\n", "given twice"),
    ("name,sequence,k\nX,ACGT,five\n", "k must be a number"),
    ("name,sequence\nX,ACGT,extra\n", "line 2: 3 fields"),
    ("name,sequence\nF1,ACGT\n", "already has a primer named 'F1'"),
    ("name,sequence\nX,acgtugcaaggcuuagcaug\n", "primer 'X': the library already has its sequence, "
                                               "as 'F1'"),
    ("name,sequence\nX,GGCC\nY,GGCC\n", "primers 'X' and 'Y' have the same sequence"),
    ("name,sequence\nZ,\n", "empty primer"),
])
def test_malformed_import_rejected_with_one_line_and_no_change(tmp_path, text, message):
    db = tmp_path / "lib.sqlite"
    with Library(db) as lib:
        lib.add(LibraryEntry("F1", "ACGTTGCAAGGCTTAGCATG"))
        before = lib.csv_text()
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    done = _cli("--library", db, "import", bad)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    with Library(db) as lib:
        assert lib.csv_text() == before


def test_default_path_is_the_users_data_dir(tmp_path):
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"))
    assert _cli("add", "--name", "P", "--sequence", "ACGTACGTAC", env=env).returncode == 0
    assert (tmp_path / "data" / "primerscope" / "library.sqlite").exists()
    assert default_path().name == "library.sqlite"
    assert set(COLUMNS) >= {"name", "sequence", "created"}


def test_not_a_library_file(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite" * 100)
    done = _cli("--library", junk, "list")
    assert done.returncode == 2 and "not a primer library" in done.stderr
