"""The library keys oligos by sequence and links them to pairs (issue 32, item 4): pairs that
share a primer store it once, the order sheet orders it once; a version-1 file migrates on its
first write, in one transaction, with every row kept."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict

import pytest

import engine.primers.library as library_module
from engine.primers.library import APPLICATION_ID, Library, LibraryEntry
from engine.sequences import decode, encode, reverse_complement

from app import demo

#: The schema of version 1, as primerscope wrote it before pairs were linked.
V1_SCHEMA = """
CREATE TABLE IF NOT EXISTS primers (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL UNIQUE,
    sequence     TEXT NOT NULL,
    orientation  TEXT NOT NULL DEFAULT '',
    target_id    TEXT NOT NULL DEFAULT '',
    target_start INTEGER,
    target_end   INTEGER,
    k            INTEGER,
    background   TEXT NOT NULL DEFAULT '',
    tm           REAL,
    gc_percent   REAL,
    notes        TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL
)
"""


def shared_reverse_pairs():
    """Five lambda pairs with five forward primers and one reverse primer (the shape of the
    demo design that stored its reverse primer four times)."""
    lam = demo.records("lambda")[0].text
    reverse = decode(reverse_complement(encode(lam[1400:1420])))
    entries = [LibraryEntry(f"lam_{1001 + 40 * i}F", lam[1000 + 40 * i:1020 + 40 * i], "forward",
                            "NC_001416.1", 1001 + 40 * i, 1020 + 40 * i) for i in range(5)]
    entries.append(LibraryEntry("lam_1420R", reverse, "reverse", "NC_001416.1", 1401, 1420))
    links = [(e.sequence, reverse, 1420 - e.target_start + 1) for e in entries[:5]]
    return entries, links


def v1_file(path, rows, application_id=APPLICATION_ID):
    db = sqlite3.connect(path)
    db.execute(V1_SCHEMA)
    db.execute("PRAGMA user_version = 1")
    db.execute(f"PRAGMA application_id = {application_id}")
    cols = [f for f in asdict(rows[0])]
    db.executemany(f"INSERT INTO primers ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                   [tuple(asdict(r).values()) for r in rows])
    db.commit()
    db.close()


def test_pairs_sharing_a_primer_store_it_once(tmp_path):
    entries, links = shared_reverse_pairs()
    with Library(tmp_path / "lib.sqlite") as lib:
        per_pair = [e for i in range(5) for e in (entries[i], entries[5])]  # 10 primers, 6 oligos
        added, linked = lib.store(per_pair, links)
        assert len(added) == 6 and linked == 5 and len(lib) == 6
        assert [e.sequence for e in lib.entries()].count(entries[5].sequence) == 1
        assert lib.pairs() == [(e.name, "lam_1420R", size) for e, (_, _, size)
                               in zip(entries, links)]
        order = lib.order_sheet_text().splitlines()[1:]
        assert len(order) == 6 and sum(entries[5].sequence in row for row in order) == 1
        # The same pairs again (another add from the window): nothing new.
        assert lib.store(per_pair, links) == ([], 0) and len(lib) == 6 and len(lib.pairs()) == 5
        # A new name for a held sequence is still that oligo.
        renamed = [LibraryEntry("other", entries[5].sequence.lower())]
        assert lib.store(renamed) == ([], 0) and lib.get("other") is None
        # Removing the shared primer removes its pairs, not the forward primers.
        lib.remove(["lam_1420R"])
        assert lib.pairs() == [] and len(lib) == 5


def test_store_renames_a_taken_name_for_a_new_sequence(tmp_path):
    from app.library import unique_names

    entries, links = shared_reverse_pairs()
    with Library(tmp_path / "lib.sqlite") as lib:
        lib.add(LibraryEntry("lam_1420R", "ACGTACGTACGTACGTAC"))  # another oligo, same name
        added, linked = lib.store(entries, links, rename=unique_names)
        assert [e.name for e in added][-1] == "lam_1420R-2" and linked == 5
        with pytest.raises(ValueError, match="already has a primer named 'lam_1420R-2'"):
            lib.store([LibraryEntry("lam_1420R-2", "GGGGCCCCAAAATTTT")])


def test_the_order_sheet_orders_a_sequence_once(tmp_path):
    path = tmp_path / "v1.sqlite"  # two names a version-1 library gave one sequence
    v1_file(path, [LibraryEntry(n, s).checked() for n, s in
                   (("a", "ACGTACGTACGTAC"), ("b", "ACGTACGTACGTAC"), ("c", "GGGGCCCCAAAATT"))])
    with Library(path) as lib:
        rows = lib.order_sheet_text().splitlines()[1:]
        assert [r.split(",")[0] for r in rows] == ["a", "c"]


def test_a_second_name_for_a_held_sequence_is_refused(tmp_path):
    """One sequence, one name: add and import refuse a sequence the library holds under
    another name (any case, U for T), or one an import gives twice, naming the entry that
    has it; nothing is added. store (the window's adds) takes the held oligo instead."""
    entries, links = shared_reverse_pairs()
    with Library(tmp_path / "lib.sqlite") as lib:
        lib.store(entries, links)
        before = lib.entries()
        held = entries[5].sequence
        again = held.lower().replace("t", "u")
        with pytest.raises(ValueError, match="primer 'myR': the library already has its "
                                             "sequence, as 'lam_1420R'"):
            lib.add(LibraryEntry("myR", again))
        with pytest.raises(ValueError, match="'lam_1420R'"):
            lib.add_many([LibraryEntry("new", "GGGGCCCCAAAATT"), LibraryEntry("myR", held)])
        with pytest.raises(ValueError, match="primers 'x' and 'y' have the same sequence"):
            lib.import_csv("name,sequence\nx,GGGGCCCCAAAATT\ny,ggggccccaaaatt\n")
        with pytest.raises(ValueError, match="as 'lam_1001F'"):
            lib.import_csv(f"name,sequence\nnew,GGGGCCCCAAAATT\nmine,{entries[0].sequence}\n")
        assert lib.entries() == before
        assert lib.store([LibraryEntry("myR", held)]) == ([], 0)  # the held oligo is kept
        assert lib.add(LibraryEntry("myR", "GGGGCCCCAAAATT")).name == "myR"


@pytest.mark.parametrize("application_id", [APPLICATION_ID, 0])
def test_a_version_1_file_migrates_with_nothing_lost(tmp_path, application_id):
    entries, links = shared_reverse_pairs()
    old = [e.checked() for e in entries]
    # As the window stored a shared reverse primer before: one row per add, a new name each.
    old += [LibraryEntry(f"lam_1420R-{n}", entries[5].sequence, "reverse", "NC_001416.1", 1401,
                         1420, notes=f"pair {n}").checked() for n in (2, 3)]
    path = tmp_path / "v1.sqlite"
    v1_file(path, old, application_id)
    with Library(path, readonly=True) as lib:  # reading does not migrate
        assert lib.entries() == old and lib.pairs() == []
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 1
    with Library(path) as lib:
        assert lib.entries() == old
        assert lib.store(entries, links) == ([], 5)  # the held rows are the oligos
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == library_module.SCHEMA_VERSION
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    db.close()
    with Library(path, readonly=True) as lib:
        assert lib.entries() == old and len(lib.pairs()) == 5


def test_a_failed_migration_leaves_the_version_1_file(tmp_path, monkeypatch):
    entries, _ = shared_reverse_pairs()
    old = [e.checked() for e in entries]
    path = tmp_path / "v1.sqlite"
    v1_file(path, old)
    monkeypatch.setattr(library_module, "_SCHEMA",
                        library_module._SCHEMA + "; CREATE TABLE primers (x)")  # fails last
    with pytest.raises(ValueError, match="cannot write to the library"):
        Library(path)
    db = sqlite3.connect(path)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1 and "pairs" not in tables
    db.close()
    monkeypatch.undo()
    with Library(path) as lib:
        assert lib.entries() == old


def test_a_foreign_database_is_still_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE pairs (a, b)")
    db.execute("CREATE TABLE customers (name)")
    db.commit()
    db.close()
    with pytest.raises(ValueError, match="another application's SQLite database"):
        Library(path)
