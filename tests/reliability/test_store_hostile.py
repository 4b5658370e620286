"""Issue #34's genome-store and .2bit cases: crafted stores, duplicate ids, truncated and
corrupt .2bit files, a changed source, a store rebuilt under a running job.

The crash cases run the real command in a subprocess (a read outside the map is a signal,
not an exception) and must exit 2 with one line; the fuzzers (tests/reliability/store_fuzz.py)
run in a child process for the same reason.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib

import pytest

from engine import store
from engine.sequences import load
from tests.reliability.helpers import ROOT, env, leftovers, one_line_error, run
from tests.reliability.store_fuzz import RECORDS, _fasta, _reseal, _write_2bit

QUICK_S = 120


def _store(tmp_path, records=RECORDS, name="g"):
    out = tmp_path / f"{name}.psg"
    store.build(_fasta(tmp_path / f"{name}.fa", records), out)
    return out


def _crafted(tmp_path, change):
    """A store edited by ``change(data, fields, n)`` with every checksum recomputed."""
    data = bytearray(_store(tmp_path).read_bytes())
    fields = store._HEADER.unpack_from(data)
    change(data, fields, fields[3])
    bad = tmp_path / "bad.psg"
    bad.write_bytes(bytes(_reseal(data)))
    return bad


def _column(data, fields, column, record, value):
    struct.pack_into("<q", data, fields[7] + 8 * (column * fields[3] + record), value)


def _names(data, fields, n, meta):
    import json

    start = fields[7] + 32 * n
    new = json.dumps(meta).encode()
    del data[start:fields[7] + fields[8]]
    data[start:start] = new
    head = list(fields)
    head[8] = 32 * n + len(new)
    head[13] = fields[13] + len(new) - (fields[8] - 32 * n)
    head[9] = fields[9] + len(new) - (fields[8] - 32 * n)
    data[:store._HEADER.size] = store._HEADER.pack(*head)


CRAFTED = {
    "a length past the payload": (lambda d, f, n: _column(d, f, 0, 0, 10**9), "record lengths"),
    "an offset past the payload": (lambda d, f, n: _column(d, f, 1, 1, 10**6), "record offsets"),
    "an offset into the record before": (lambda d, f, n: _column(d, f, 1, 1, 1),
                                         "record offsets"),
    "a negative length": (lambda d, f, n: _column(d, f, 0, 2, -5), "record lengths"),
    "a negative N-run count": (lambda d, f, n: _column(d, f, 2, 0, -1), "interval table size"),
    "no source": (lambda d, f, n: _names(d, f, n, {"ids": ["a", "b", "c"],
                                                   "descriptions": ["", "", ""]}),
                  "record names"),
    "duplicate ids": (lambda d, f, n: _names(d, f, n, {"ids": ["a", "a", "c"], "descriptions":
                                                       ["", "", ""], "source": {}}),
                      "duplicate record ids"),
    "more records than the table holds": (
        lambda d, f, n: d.__setitem__(slice(0, store._HEADER.size), store._HEADER.pack(
            *f[:3], 10**6, *f[4:])), "do not fit"),
    "an N run past its record": (
        lambda d, f, n: struct.pack_into("<q", d, f[13] + 8 * 1, 10**6), "N-run table"),
}


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_crafted_store_is_one_line_not_a_crash(tmp_path, case):
    """Checksums recomputed to match: a record past the payload segfaulted (exit 139), one
    inside the table read its bytes as bases, while ``index --check`` said ok."""
    change, message = CRAFTED[case]
    bad = _crafted(tmp_path, change)
    line = one_line_error(run("index", "--check", bad, "--no-progress", timeout=QUICK_S))
    assert line.startswith(f"primerscope: error: {bad}: corrupt genome store (") and message in line


def test_crafted_store_refused_by_a_search(tmp_path):
    """The job that crashed: a record's length past the payload, searched."""
    bad = _crafted(tmp_path, CRAFTED["a length past the payload"][0])
    line = one_line_error(run("offtarget", "ACGTACGTTTGCAACG", bad, "--max-edits", "1",
                              "--no-progress", timeout=QUICK_S))
    assert f"{bad}: corrupt genome store (record lengths" in line


def test_store_fuzzer():
    """Header, table, intervals and payload bytes changed, checksums recomputed or not: the
    original answer or one line (in a child: a bad read is a signal)."""
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-m",
                           "tests.reliability.store_fuzz", "store"], cwd=ROOT, env=env(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), \
        (done.returncode, done.stdout[-3000:], done.stderr[-3000:])


def test_twobit_fuzzer():
    """A .2bit cut at every section edge and inside each; header and index bytes changed."""
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-m",
                           "tests.reliability.store_fuzz", "twobit"], cwd=ROOT, env=env(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), \
        (done.returncode, done.stdout[-3000:], done.stderr[-3000:])


@pytest.mark.parametrize("damage,message", [
    (lambda d: d[:-1], "bases at byte"),                             # cut short: bases missing
    (lambda d: d[:8] + struct.pack("<I", 10**6) + d[12:], "an index of 1,000,000 records"),
    (lambda d: d[:16] + bytes([200]) + d[17:], "runs past the end"),  # a name length
])
def test_bad_twobit_index_is_one_line_and_leaves_nothing(tmp_path, damage, message):
    """A truncated .2bit built with exit 0 (missing bases became T); a corrupt header
    crashed index with SIGBUS inside py2bit and left a temporary file."""
    good = tmp_path / "g.2bit"
    _write_2bit(good, RECORDS)
    bad = tmp_path / "bad.2bit"
    bad.write_bytes(damage(good.read_bytes()))
    line = one_line_error(run("index", bad, "-o", tmp_path / "bad.psg", "--no-progress",
                              timeout=QUICK_S))
    assert line.startswith(f"primerscope: error: {bad}: not a valid 2bit file (") and message in line
    assert not (tmp_path / "bad.psg").exists() and leftovers(tmp_path) == []


def test_duplicate_ids_renamed_as_the_loader_does(tmp_path):
    """index kept duplicate ids while loading the FASTA renamed them; offtarget against the
    store then reported 1 site where there are 2."""
    site = "GATTACAGATTACACCGT"
    records = [("dup", "ACGT" * 5 + site + "ACGT" * 5), ("dup", "TTTT" * 5 + site + "TTTT" * 5)]
    fasta = _fasta(tmp_path / "dup.fa", records)
    out = tmp_path / "dup.psg"
    built = run("index", fasta, "-o", out, "--no-progress", timeout=QUICK_S)
    assert built.returncode == 0, built.stderr
    assert f"{fasta}: duplicate record ids made unique (dup -> dup_2)" in built.stderr
    with pytest.warns(UserWarning, match="duplicate record ids"):
        from_fasta = [r.id for r in load(str(fasta))]
    assert [r.id for r in load(str(out))] == from_fasta == ["dup", "dup_2"]
    done = run("offtarget", site, out, "--max-edits", "0", "--no-progress", timeout=QUICK_S)
    assert done.returncode == 0, done.stderr
    rows = done.stdout.strip().splitlines()[1:]
    assert sorted(row.split(",")[0] for row in rows) == ["dup", "dup_2"], done.stdout


def test_changed_source_is_reported(tmp_path):
    """A store used after its source FASTA changed was silent, and --check said ok."""
    out = _store(tmp_path)
    source = tmp_path / "g.fa"
    quiet = run("index", "--check", out, "--no-progress", timeout=QUICK_S)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    st = source.stat()
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 5 * 10**9))  # touched, same size
    touched = run("index", "--check", out, "--no-progress", timeout=QUICK_S)
    assert touched.returncode == 0
    assert touched.stderr.startswith(f"primerscope: warning: {out}: its source {source} has "
                                     "changed (modified "), touched.stderr
    with open(source, "a") as fh:
        fh.write(">extra\nACGT\n")
    with pytest.warns(UserWarning, match=f"{st.st_size + 12:,} bytes, {st.st_size:,} when"):
        load(str(out))
    source.unlink()  # moved away: nothing to compare with
    assert run("index", "--check", out, "--no-progress", timeout=QUICK_S).stderr == ""


def test_rebuilding_a_mapped_store_keeps_the_old_map(tmp_path):
    """Copying a new store over a mapped one gave SIGBUS; index writes a new file and
    renames it over the old name, so a map of the old one reads the old bases."""
    out = _store(tmp_path)
    old = store.GenomeStore(out)
    inode = out.stat().st_ino
    store.build(_fasta(tmp_path / "other.fa", [("x", "GGGG" * 1000)]), out)
    assert out.stat().st_ino != inode
    assert [r.id for r in old.records()] == ["chr1", "chr2", "chr3"]
    from engine.sequences import decode

    assert decode(old.records()[1].chunk(0, 14)) == RECORDS[1][1].upper()
    assert [r.id for r in store.GenomeStore(out).records()] == ["x"]


def test_zlib_crc_of_crafted_cases_is_recomputed(tmp_path):
    """The crafted stores above are not refused for a checksum: each passes the CRC checks."""
    bad = _crafted(tmp_path, CRAFTED["a length past the payload"][0])
    data = bad.read_bytes()
    fields = store._HEADER.unpack_from(data)
    assert zlib.crc32(data[fields[7]:fields[7] + fields[8]]) == fields[12]
