"""engine.cli.preload: a command line's input files read by a child while the process imports
the engine (issue #16). What the child read is what a read here gives, warnings included;
whatever it did not read (a bad file, a store, a literal, a file over the limit) is read
here, with the same messages; only the command line's own process forks."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

_PROGRAM = """
import sys, warnings
from engine import interrupts, sequences
from engine.cli import preload
if {installed}:
    interrupts.install()
preload.LIMIT_BYTES = {limit}
sources = {sources!r}
print("forked", preload.start(sources + ["ACGT"]))
read_here = []
original = sequences.load
sequences.load = lambda source, **kw: read_here.append(source) or original(source, **kw)
for source in sources + ["ACGT"]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = preload.take(source)
        if records is None:
            try:
                records = sequences.load(source)
            except ValueError as exc:
                records = [str(exc)]
    print(source, [(r.id, r.text, r.description) if hasattr(r, "id") else r for r in records],
          [str(w.message) for w in caught])
print("read here", read_here)
print("numba" in sys.modules, "engine.store" in sys.modules)
"""


def _run(sources, installed=True, limit=64 << 20) -> list[str]:
    code = _PROGRAM.format(installed=installed, limit=limit, sources=[str(s) for s in sources])
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def _inputs(tmp_path):
    good = tmp_path / "good.fa"
    good.write_text(">a first\nACGTN\n>a again\nRYKM\n")  # a duplicate id: one warning
    bad = tmp_path / "bad.fa"
    bad.write_text(">x\nACGT!\n")
    store = tmp_path / "genome.psg"
    store.write_bytes(b"PSGENOME" + b"\0" * 64)
    return good, bad, store


def test_the_child_reads_what_a_read_here_would_and_leaves_the_rest(tmp_path):
    good, bad, store = _inputs(tmp_path)
    here = _run([good, bad, store], installed=False)  # no preload: everything read here
    preloaded = _run([good, bad, store])
    assert here[0] == "forked False" and preloaded[0] == "forked True"
    assert here[1:-2] == preloaded[1:-2]  # the same records, warnings and errors
    assert "a_2" in here[1] and "duplicate" in here[1] and "'!'" in here[2]
    assert preloaded[-2] == f"read here {[str(bad), str(store), 'ACGT']}"  # not the good file
    assert here[-2] == f"read here {[str(good), str(bad), str(store), 'ACGT']}"


def test_files_over_the_limit_are_read_here(tmp_path):
    good, _, _ = _inputs(tmp_path)
    out = _run([good], limit=10)
    assert out[0] == "forked False" and out[-2] == f"read here {[str(good), 'ACGT']}"
    assert out[-1] == "False False"  # reading a sequence file imports neither store nor numba


def test_a_run_through_the_command_line_gives_the_same_output(tmp_path):
    """The real entry point (python -m engine.cli) preloads; main() called in a process that
    did not install the handlers does not: the same CSV either way."""
    good, _, _ = _inputs(tmp_path)
    good.write_text(">a first\nGATTACAGGCTTAACCGTAGGCATCAAGT\n>a again\nRYKMACGTTTAGC\n")
    background = tmp_path / "background.fa"
    background.write_text(">bg\nACGTTGCAACGTAGCTAGCTAGGATCGATCGTAGCTAG\n")
    args = ["kdiff", str(good), str(background), "-k", "1", "--backend", "serial", "--no-progress"]
    cli = subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    direct = subprocess.run([sys.executable, "-c", "import sys\nfrom engine.cli import main\n"
                             f"sys.exit(main({args!r}))"], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert cli.returncode == direct.returncode == 0, (cli.stderr, direct.stderr)
    assert cli.stdout == direct.stdout and cli.stdout.count("\n") > 2
    assert cli.stderr == direct.stderr and "duplicate" in cli.stderr
