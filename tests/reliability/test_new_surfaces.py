"""Issue #34: the hostile cases of pairs/pcr/panel, Dask addresses, large inputs and the
primer library (the store and .2bit cases are engine/store.py's, tested elsewhere).

Every crash case runs the real command in a subprocess and must end with exit 2 (or the
stated status) and one line; every hang case states its bound and must finish under it;
the memory cases run under an address-space limit (RLIMIT_AS in the subprocess).
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from tests.reliability.helpers import ROOT, command, env, one_line_error, run

#: Seconds a command may take on the shared 2-core CI machine (imports, a compile).
QUICK_S = 60


def _fasta(path, records):
    path.write_text("".join(f">{name}\n{seq}\n" for name, seq in records))
    return path


def _random_dna(rng, n):
    return np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, n)].tobytes().decode()


def _distinct_dna(i: int, n: int = 18) -> str:
    """An n-mer of its own for each i (the library keeps a sequence once, under one name)."""
    return "".join("ACGT"[(i >> 2 * j) & 3] for j in range(n))


# ---------------------------------------------------------------------------- pairs

def test_a_target_under_3_nt_is_skipped_with_a_warning_not_an_abort(tmp_path):
    """Primer3's C code asserts a template of >= 3 nt (SIGABRT, exit 134, every record's
    results lost): the tiny record is skipped, the others keep their pairs."""
    rng = np.random.default_rng(34)
    good = _random_dna(rng, 250)
    background = _fasta(tmp_path / "bg.fa", [("bg", _random_dna(rng, 500))])
    alone = run("pairs", _fasta(tmp_path / "one.fa", [("good", good)]), background, "-k", "3",
                "--json", "--no-progress")
    both = run("pairs", _fasta(tmp_path / "two.fa", [("tiny", "AC"), ("good", good)]),
               background, "-k", "3", "--json", "--no-progress")
    assert alone.returncode == 0, alone.stderr
    assert both.returncode == 0, both.stderr
    assert both.stderr.strip().splitlines() == [
        "primerscope: warning: target record 'tiny' has 2 nt, fewer than the 3 Primer3 needs: "
        "skipped"]
    pairs_alone, pairs_both = json.loads(alone.stdout)["pairs"], json.loads(both.stdout)["pairs"]
    assert pairs_alone and pairs_both == pairs_alone
    literal = run("pairs", "AC", background, "-k", "1", "--no-progress")
    assert literal.returncode == 0 and "fewer than the 3 Primer3 needs" in literal.stderr


def test_a_rejected_primer3_setting_is_one_error_and_nothing_on_stdout(capsys):
    from engine.primers import primer3_design as p3

    with pytest.raises(ValueError, match="PRIMER_PRODUCT_SIZE_RANGE"):
        p3._design({"SEQUENCE_ID": "t", "SEQUENCE_TEMPLATE": "ACGT" * 30},
                   p3.DesignSettings().global_args(PRIMER_PRODUCT_SIZE_RANGE="1-99999999999999999999"))
    assert capsys.readouterr().out == ""  # primer3-py printed its whole input here


# ---------------------------------------------------------------------------- numeric options

HUGE = "99999999999999999999"
LITERALS = ["F=ACGTACGTACGTACGTAC,R=GTACGTACGTACGTACGT",
            "ACGTACGTACGTACGTACGTAAAAAAAGTACGTACGTACGTACGT"]
TARGET = "ACGTTGCATGCCATGACTGACTGGCATCGATCGACTGACTGACTAGCTAGCTAGCTGACTGACTGATCG"


@pytest.mark.parametrize("args,words", [
    # (PcrSettings' numbers: the registry's one check, the API's words: "max_edits must be")
    (["pcr", *LITERALS, "--max-product", "9223372036854775807"], "max_product"),
    (["pcr", *LITERALS, "--3prime-window", HUGE], "three_prime_window"),
    (["pcr", *LITERALS, "--min-product", HUGE, "--max-product", HUGE], "min_product"),
    (["pcr", *LITERALS, "--max-edits", HUGE], "max_edits"),
    (["offtarget", "ACGTACGTAC", "ACGTACGTACGT", "--max-edits", HUGE], "max_edits"),
    (["pairs", TARGET, "ACGT", "-k", "1", "--num-return", "1e20"], "--num-return"),
    (["pairs", TARGET, "ACGT", "-k", "1", "--num-return", HUGE], "--num-return"),
    (["pairs", TARGET, "ACGT", "-k", HUGE], "-k"),
    (["pairs", TARGET, "ACGT", "-k", "1", "--product-size", f"1-{HUGE}"], "product size"),
    (["panel", LITERALS[0], "--end-dimer-dg", "1e308"], "--end-dimer-dg"),
    (["check", *LITERALS, "--end-dimer-dg", "nan"], "--end-dimer-dg"),  # (flagged nothing)
    (["kdiff", "ACGT", "ACGT", "-k", "1", "--scheduler-timeout", "nan"], "--scheduler-timeout"),
    (["library", "--library", "{db}", "add", "--name", "a", "--sequence", "ACGT", "--start", HUGE],
     "target_start"),
    (["library", "--library", "{db}", "add", "--name", "a", "--sequence", "ACGT", "--tm", "1e308"],
     "tm must be"),
])
def test_every_numeric_option_is_bounded(tmp_path, args, words):
    """A number past its range is one line and exit 2 before any work (it gave an empty
    result, a raw OverflowError, or a run of minutes)."""
    args = [a.format(db=tmp_path / "lib.sqlite") for a in args]
    t0 = time.monotonic()
    extra = [] if args[0] == "library" else ["--no-progress"]
    line = one_line_error(run(*args, *extra, timeout=QUICK_S))
    assert words in line and any(w in line for w in ("must be", "at most", "expected")), line
    assert time.monotonic() - t0 < QUICK_S


# ---------------------------------------------------------------------------- Dask addresses

@pytest.mark.parametrize("address,words", [
    ("foo", "no port"), ("tcp://host", "no port"), ("http://example.org:80", "http://"),
    ("inproc://x", "inproc://"), ("tcp://h:99999", "port must be"), ("tcp://:8786", "no host"),
])
def test_a_bad_scheduler_address_is_one_line_at_once(address, words):
    """Dask stalled 20 s on these and printed a traceback from its destructor."""
    t0 = time.monotonic()
    line = one_line_error(run("kdiff", "ACGTACGT", "ACGTAAAA", "-k", "1", "--backend", "dask",
                              "--scheduler", address, timeout=QUICK_S))
    assert "--scheduler must be an address like tcp://HOST:PORT" in line and words in line
    assert time.monotonic() - t0 < 20  # (the check runs before Dask is imported)


class _Listener:
    """A TCP server on 127.0.0.1 that is not a Dask scheduler: ``send`` is what it writes to
    each connection (nothing: a web server waiting for a request)."""

    def __init__(self, send: bytes = b""):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.address = "tcp://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.send, self.conns = send, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.send:
                conn.sendall(self.send)

    def close(self):
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.mark.parametrize("send,words", [
    (b"", "sent no handshake within 2 s"),
    (os.urandom(1 << 12), "first message is not a Dask handshake"),
    (b"HTTP/1.0 200 OK\r\n\r\n" * 50, "first message is not a Dask handshake"),
])
def test_a_listener_that_is_not_a_scheduler_ends_in_one_line(send, words):
    """It never timed out (a silent listener) or ran out of memory with a traceback (random
    bytes). Bound: --scheduler-timeout 2 plus start-up, well under QUICK_S."""
    server = _Listener(send)
    try:
        t0 = time.monotonic()
        line = one_line_error(run("kdiff", "ACGTACGT", "ACGTAAAA", "-k", "1", "--backend", "dask",
                                  "--scheduler", server.address, "--scheduler-timeout", "2",
                                  timeout=QUICK_S))
        assert time.monotonic() - t0 < QUICK_S
        assert f"{server.address} is not a Dask scheduler" in line and words in line
    finally:
        server.close()


def test_a_task_the_cluster_forgot_is_one_line():
    """Every worker lost: Dask cancels the futures ("already forgotten")."""
    from distributed.client import FutureCancelledError

    from engine.cluster import task_result

    class Forgotten:
        def result(self):
            raise FutureCancelledError("task-1", "already forgotten")

    with pytest.raises(RuntimeError, match="the Dask cluster dropped a task"):
        task_result(Forgotten())


# ---------------------------------------------------------------------------- memory bounds

def _limited(gib: float):
    def apply():
        limit = int(gib * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def _run_limited(gib: float, *args, timeout=300):
    return subprocess.run(command(*args), capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, preexec_fn=_limited(gib),
                          env=env(NUMBA_NUM_THREADS=2, MALLOC_ARENA_MAX=2))


def test_a_gzip_bomb_background_is_refused_with_the_reason(tmp_path):
    """A 2 MB .fa.gz of 2 GB of A passed 10 GB and was killed without a word (measured after
    the fix: refused in 5 s at 330 MB under a 2 GB limit). Here a 256 MB bomb under a 1 GB
    limit: the bound is the memory left / 8 bytes per byte of text, whatever the sizes, so
    the mechanism is the same; reading it whole would take ~2 GB (out of memory before)."""
    bomb = tmp_path / "bomb.fa.gz"
    with gzip.open(bomb, "wb", compresslevel=6) as fh:
        fh.write(b">bomb\n")
        block = (b"A" * 60 + b"\n") * (1 << 14)
        for _ in range((256 << 20) // len(block)):
            fh.write(block)
    assert bomb.stat().st_size < 2 << 20
    t0 = time.monotonic()
    done = _run_limited(1, "kdiff", "ACGTACGTACGTAGCTAGCTAGCTAGC", bomb, "-k", "2", timeout=120)
    line = one_line_error(done)
    assert "unpacks to more text than this process can read into memory" in line
    assert "primerscope index" in line and time.monotonic() - t0 < 120
    small = tmp_path / "small.fa.gz"  # the limit leaves ordinary inputs alone
    with gzip.open(small, "wt") as fh:
        fh.write(">s\n" + _random_dna(np.random.default_rng(1), 200_000) + "\n")
    assert _run_limited(1, "kdiff", "ACGTACGTACGTAGCTAGC", small, "-k", "2", "-o",
                        tmp_path / "out.csv").returncode == 0


def test_the_text_limit_is_what_memory_allows(tmp_path, monkeypatch):
    from engine import memory, sequences

    path = tmp_path / "t.fa"
    path.write_text(">t\n" + "ACGT" * 1000 + "\n")
    size = path.stat().st_size
    monkeypatch.setattr(memory, "available_bytes", lambda: size * sequences.READ_BYTES_PER_TEXT_BYTE)
    assert len(sequences.load(str(path))[0]) == 4000
    monkeypatch.setattr(memory, "available_bytes",
                        lambda: (size - 1) * sequences.READ_BYTES_PER_TEXT_BYTE)
    with pytest.raises(sequences.SequenceError, match="more text than this process can read"):
        sequences.load(str(path))


def test_pcr_against_many_tiny_records_runs_in_bounded_memory(tmp_path):
    """40 primers x 100k tiny records used 2 GB (a search task per primer, record and
    strand); measured after the fix: 500 MB, and it runs under a 1 GB limit. Here 50k
    records under 1 GB, which the unbatched search ran out of (checked)."""
    rng = np.random.default_rng(7)
    primers = [_random_dna(rng, 20) for _ in range(40)]
    records = [(f"r{i}", _random_dna(rng, 30)) for i in range(50_000)]
    # A product to find: primer 0 and the reverse complement of primer 1 in record 123.
    from engine.sequences import decode, encode, reverse_complement

    records[123] = ("r123", primers[0] + "TTTT" + decode(reverse_complement(encode(primers[1]))))
    table = tmp_path / "p.csv"
    table.write_text("name,sequence\n" + "".join(f"p{i},{s}\n" for i, s in enumerate(primers)))
    bg = _fasta(tmp_path / "bg.fa", records)
    out = tmp_path / "out.json"
    done = _run_limited(1, "pcr", table, bg, "--backend", "serial", "--max-edits", "1", "--json",
                        "-o", out, "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    products = json.loads(out.read_text())["products"]
    assert any(p["record"] == "r123" and p["forward"] == "p0" and p["reverse"] == "p1"
               for p in products), products[:5]


def test_the_batched_search_finds_what_one_search_finds(monkeypatch):
    """pcr.search_hits over batches of records equals the search over all of them."""
    from engine.jobs import drive
    from engine.primers import pcr
    from engine.sequences import Record, encode

    rng = np.random.default_rng(11)
    primers = [Record(f"p{i}", encode(_random_dna(rng, 12))) for i in range(3)]
    text = [Record(f"r{i}", encode(_random_dna(rng, int(rng.integers(5, 80))))) for i in range(300)]
    for i in range(0, 300, 7):  # plant sites
        p = primers[i % 3].text
        text[i] = Record(f"r{i}", encode(_random_dna(rng, 5) + p + _random_dna(rng, 5)))
    settings = pcr.PcrSettings(max_edits=2, max_3prime_edits=1, max_product=100)
    want = drive(pcr.iter_solve(pcr.make_job(primers, text, settings, backend="serial")))
    monkeypatch.setattr(pcr, "SEARCH_GROUPS", 6 * 37)  # batches of 37 records
    got = drive(pcr.iter_solve(pcr.make_job(primers, text, settings, backend="serial")))
    assert len(want.sites) > 40
    assert list(got.sites) == list(want.sites) and list(got.products) == list(want.products)


# ---------------------------------------------------------------------------- primers > 60 nt

def test_primers_of_61_to_100_nt_are_annotated_as_far_as_primer3_goes(tmp_path):
    import primer3

    rng = np.random.default_rng(61)
    long1, long2, short = _random_dna(rng, 80), _random_dna(rng, 100), _random_dna(rng, 20)
    done = run("panel", f"A={long1},B={long2},C={short}", "--json", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        "primerscope: warning: A, B: too long for Primer3 thermodynamics (over 60 nt): no dimer "
        "values between two such primers (each with itself included)"]
    payload = json.loads(done.stdout)
    assert payload["too_long_for_thermodynamics"] == ["A", "B"]
    dg = payload["dimer_dg"]
    assert dg[0][0] is None and dg[0][1] is None and dg[1][1] is None
    assert dg[0][2] == pytest.approx(primer3.calc_heterodimer(long1, short).dg / 1000, abs=1e-3)
    db = tmp_path / "lib.sqlite"
    assert run("library", "--library", db, "add", "--name", "L", "--sequence", long2).returncode == 0
    from engine.primers.annotate import annotate
    from engine.primers.library import Library

    with Library(db, readonly=True) as lib:
        assert lib.get("L").tm == pytest.approx(primer3.calc_tm(long2))
    note = annotate(long1)
    assert note.hairpin_dg is None and note.tm is not None and "too long for Primer3" in note.note


# ---------------------------------------------------------------------------- the library

def test_another_applications_database_is_refused_and_left_unchanged(tmp_path):
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE invoices (id INTEGER, total REAL)")
        db.execute("INSERT INTO invoices VALUES (1, 9.5)")
    before = other.read_bytes()
    for args in (["list"], ["add", "--name", "x", "--sequence", "ACGT"], ["export"]):
        line = one_line_error(run("library", "--library", other, *args))
        assert "not a primer library but another application's SQLite database" in line
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]  # no -wal, no -shm


def test_reading_commands_write_nothing(tmp_path, monkeypatch):
    from engine.primers import library
    from engine.primers.library import Library, LibraryEntry

    db = tmp_path / "lib.sqlite"
    with Library(db) as lib:
        lib.add(LibraryEntry("F1", "ACGTTGCAAGGCTTAGCATG"))
    for extra in ("-wal", "-shm"):
        (tmp_path / f"lib.sqlite{extra}").unlink(missing_ok=True)
    before = db.read_bytes(), db.stat().st_mtime_ns
    assert run("library", "--library", db, "list").returncode == 0
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    missing = tmp_path / "none" / "lib.sqlite"
    listed = run("library", "--library", missing, "list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout)["primers"] == []
    assert not (tmp_path / "none").exists()
    # Read-only media: SQLite cannot make its shared-memory file there; immutable instead.
    monkeypatch.setattr(library.os, "access", lambda path, mode: False)
    assert library._read_only_uri(db).endswith("?mode=ro&immutable=1")
    with Library(db, readonly=True) as lib:
        assert [e.name for e in lib.entries()] == ["F1"]


def test_writing_a_library_on_read_only_media_says_so(tmp_path, monkeypatch):
    """add/import/remove there read "not a primer library (unable to open database file)"
    (checked on a read-only bind mount; here os.access and statvfs say what such a mount
    says, as root could not otherwise be refused)."""
    from engine.primers import library
    from engine.primers.library import Library, LibraryEntry

    db = tmp_path / "lib.sqlite"
    with Library(db) as lib:
        lib.add(LibraryEntry("F1", "ACGTTGCAAGGCTTAGCATG"))
    before = db.read_bytes()

    class ReadOnlyFs:
        f_flag = library.os.ST_RDONLY

    monkeypatch.setattr(library.os, "access", lambda path, mode: mode != library.os.W_OK)
    monkeypatch.setattr(library.os, "statvfs", lambda path: ReadOnlyFs)
    for path in (db, tmp_path / "new.sqlite"):
        with pytest.raises(ValueError, match=r"cannot write to the library \(a read-only file "
                                             r"system\); list and export can still read it"):
            Library(path)
    monkeypatch.setattr(library.os, "statvfs", lambda path: type("Fs", (), {"f_flag": 0}))
    with pytest.raises(ValueError, match=f"no permission to write {db}"):
        Library(db)
    with Library(db, readonly=True) as lib:
        assert [e.name for e in lib.entries()] == ["F1"]
    assert db.read_bytes() == before and not (tmp_path / "new.sqlite").exists()


@pytest.mark.parametrize("args,words", [
    (["--library", "{tmp}/afile/lib.sqlite", "list"], "is a file, not a folder"),
    (["--library", "{tmp}/afile/lib.sqlite", "add", "--name", "a", "--sequence", "ACGT"],
     "is a file, not a folder"),
    (["--library", "{tmp}", "list"], "is a directory, not a library file"),
    (["--library", "{tmp}/lib.sqlite", "import", "{tmp}/missing.csv"], "no such file"),
    (["--library", "{tmp}/lib.sqlite", "import", "{tmp}"], "is a directory, not a CSV file"),
    (["--library", "{tmp}/lib.sqlite", "import", "{tmp}/wide.csv"], "field larger than field limit"),
    (["--library", "{tmp}/lib.sqlite", "add", "--name", "x\x1b[31mred", "--sequence", "ACGT"],
     "U+001B"),
    (["--library", "{tmp}/lib.sqlite", "add", "--name", "\u0410B", "--sequence", "ACGT"],
     "U+0410"),
])
def test_library_paths_and_names_are_one_line(tmp_path, args, words):
    (tmp_path / "afile").write_text("")
    (tmp_path / "wide.csv").write_text("name,sequence,notes\nA,ACGT," + "x" * 140_000 + "\n")
    done = run("library", *[a.format(tmp=tmp_path) for a in args])
    line = one_line_error(done)
    assert words in line and "\x1b" not in done.stderr


def test_a_wide_csv_field_in_a_primer_table_is_one_line(tmp_path):
    table = tmp_path / "p.csv"
    table.write_text("name,sequence\nA,ACGTACGTAC\n\"" + "B" * 140_000 + "\",ACGT\n")
    assert "field larger than field limit" in one_line_error(run("pcr", table, "ACGTACGTACGT"))


def test_names_remove_twice_and_look_alikes(tmp_path):
    db = tmp_path / "lib.sqlite"
    assert run("library", "--library", db, "add", "--name", "\uff21\uff22",  # full-width AB
               "--sequence", "ACGTACGTAC").returncode == 0
    dup = run("library", "--library", db, "add", "--name", "AB", "--sequence", "ACGT")
    assert "already has a primer named 'AB'" in one_line_error(dup)
    removed = run("library", "--library", db, "remove", "AB", "AB")
    assert removed.returncode == 0 and "removed 1 primer(s)" in removed.stderr


def test_spreadsheet_exports_defuse_formulas_and_read_back(tmp_path):
    """OWASP's CSV injection advice, without breaking the files pcr and import read."""
    db = tmp_path / "lib.sqlite"
    names = ["=HYPERLINK(\"http://x\",\"y\")", "+1F", "-35box", "@SUM(A1)", "plain"]
    rng = np.random.default_rng(3)
    seqs = [_random_dna(rng, 20) for _ in names]
    for name, seq in zip(names, seqs):
        assert run("library", "--library", db, "add", f"--name={name}", "--sequence", seq,
                   "--notes==cmd|' /C calc'!A0").returncode == 0
    order = run("library", "--library", db, "export", "--format", "order").stdout.splitlines()
    cells = [line.split(",")[0] for line in order[1:]]
    assert all(not c.lstrip('"').startswith(("=", "+", "-", "@")) for c in cells), cells
    exported = tmp_path / "lib.csv"
    assert run("library", "--library", db, "export", "-o", exported).returncode == 0
    other = tmp_path / "other.sqlite"
    assert run("library", "--library", other, "import", exported).returncode == 0
    from engine.primers.library import Library

    with Library(db, readonly=True) as a, Library(other, readonly=True) as b:
        assert a.entries() == b.entries()
        assert [e.name for e in b.entries()] == names and b.entries()[0].notes.startswith("=")
    done = run("pcr", exported, "".join(seqs), "--json", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert [p["name"] for p in json.loads(done.stdout)["primers"]] == names
    panel = run("panel", exported, "--no-progress")  # a spreadsheet-bound CSV of names
    assert panel.returncode == 0, panel.stderr
    name_cells = [c for line in panel.stdout.splitlines()[1:] for c in line.split(",")[:2]]
    assert name_cells and all(not c.startswith(("=", "+", "-", "@")) for c in name_cells)
    assert "'=HYPERLINK" in panel.stdout
    check = run("check", exported, "".join(seqs), "--no-progress")  # its CSV named them raw
    assert check.returncode == 0, check.stderr
    name_cells = [line.split(",")[1] for line in check.stdout.splitlines()[1:]]
    assert len(name_cells) >= len(names), check.stdout
    assert all(not c.lstrip('"').startswith(("=", "+", "-", "@")) for c in name_cells), name_cells


def test_a_pairs_csv_defuses_a_formula_target_id_and_reads_back(tmp_path):
    """A target record named like a formula went raw into the pairs CSV; quoted, the CSV
    still gives pcr the pairs' primers under the same names."""
    rng = np.random.default_rng(34)
    target = _fasta(tmp_path / "t.fa", [("=HYPERLINK(x)", _random_dna(rng, 250))])
    background = _fasta(tmp_path / "bg.fa", [("bg", _random_dna(rng, 500))])
    out = tmp_path / "pairs.csv"
    done = run("pairs", target, background, "-k", "3", "-o", out, "--no-progress")
    assert done.returncode == 0, done.stderr
    cells = [line.split(",")[0] for line in out.read_text().splitlines()[1:]]
    assert cells and all(c == "'=HYPERLINK(x)" for c in cells), cells
    from engine.primers.primer_sets import load_primers

    assert all(r.id.startswith("=HYPERLINK(x)_") for r in load_primers(str(out)))


def test_genbank_export_keeps_features_inside_the_record(tmp_path):
    from Bio import SeqIO

    db = tmp_path / "lib.sqlite"
    for i, (name, start, end) in enumerate((("inside", 2, 11), ("across", 40, 55),
                                            ("beyond", 90, 99))):
        assert run("library", "--library", db, "add", "--name", name, "--sequence", _distinct_dna(i, 10),
                   "--target-id", "t", "--start", start, "--end", end).returncode == 0
    target = _fasta(tmp_path / "t.fa", [("t", "ACGTACGTACGT" * 4)])  # 48 nt
    gb = tmp_path / "t.gb"
    done = run("library", "--library", db, "export", "--format", "genbank", "--target", target,
               "-o", gb)
    assert done.returncode == 0, done.stderr
    warnings = done.stderr.strip().splitlines()
    assert len(warnings) == 2 and "cut to 40-48" in warnings[0] and "left out" in warnings[1]
    rec = SeqIO.read(gb, "genbank")
    spans = [(f.qualifiers["label"][0], int(f.location.start), int(f.location.end))
             for f in rec.features]
    assert spans == [("inside", 1, 11), ("across", 39, 48)]


def test_ctrl_c_just_after_the_commit_reports_the_import(tmp_path):
    """The signal arrives while the COMMIT runs (injected there, no timing): the import is
    settled, so the run says what it did and exits 0; one just before the commit rolls
    back and says so."""
    csv_path = tmp_path / "p.csv"
    csv_path.write_text("name,sequence\n" + "".join(f"p{i},{_distinct_dna(i)}\n" for i in range(500)))
    script = """
import os, signal, sys
from engine import interrupts
real, sent, when = interrupts.settle, [], sys.argv[1]
def settle():  # the library's hook just before its COMMIT (and report_errors' later)
    if when == "before" and not sent:
        sent.append(when)
        os.kill(os.getpid(), signal.SIGINT)
    real()
    if when == "after" and not sent:
        sent.append(when)
        os.kill(os.getpid(), signal.SIGINT)
interrupts.settle = settle
from app.launcher import main
sys.argv = ["primerscope", "library", "--library", sys.argv[2], "import", sys.argv[3]]
sys.exit(main())
"""
    from engine.primers.library import Library

    for when, status, words, rows in (("after", 0, "imported 500 primer(s)", 500),
                                      ("before", 130, "interrupted", 0)):
        db = tmp_path / f"{when}.sqlite"
        done = subprocess.run([sys.executable, "-c", script, when, str(db), str(csv_path)],
                              capture_output=True, text=True, cwd=ROOT, env=env(), timeout=120)
        assert done.returncode == status, done.stderr
        assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1
        with Library(db, readonly=True) as lib:
            assert len(lib) == rows


def test_an_import_reports_its_rate_and_scales_linearly(tmp_path):
    """40k rows took 79 s (a quadratic scan); now one transaction at thousands of rows a
    second (a 1 M-row import is measured in docs/benchmarks.md)."""
    csv_path = tmp_path / "p.csv"
    csv_path.write_text("name,sequence\n" + "".join(f"p{i},{_distinct_dna(i)}\n"
                                                    for i in range(40_000)))
    t0 = time.monotonic()
    done = run("library", "--library", tmp_path / "lib.sqlite", "import", csv_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "imported 40000 primer(s)" in done.stderr and "rows/s)" in done.stderr
    assert time.monotonic() - t0 < 60


# ---------------------------------------------------------------------------- temporaries

def test_the_temporaries_of_killed_runs_are_cleaned_by_the_next_run(tmp_path):
    from engine import output

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host = socket.gethostname().replace("-", "_") or "host"
    stale = tmp_path / f"{output.TEMP_PREFIX}{host}-{gone.pid}-abc"
    live = tmp_path / f"{output.TEMP_PREFIX}{host}-{os.getpid()}-abc"
    old = tmp_path / f"{output.TEMP_PREFIX}xyz"
    fresh = tmp_path / f"{output.TEMP_PREFIX}other_host-1-abc"
    for path in (stale, live, old, fresh):
        path.write_text("partial")
    os.utime(old, (time.time() - 2 * output.STALE_SECONDS,) * 2)
    done = run("kdiff", "ACGTACGTTT", "ACGA", "-k", "2", "-o", tmp_path / "out.csv")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out.csv", live.name, fresh.name])
